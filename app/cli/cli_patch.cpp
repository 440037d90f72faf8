// `headlight patch`: activation patching of a clean and a corrupted text (app/session/
// activation_patching.h), one pass per cell with progress on stderr, written as CSV and, with
// --figure, as the heatmap of app/figures/patching_figure.h. Its options: patchCommand() at the
// end.
#include "activation_patching.h"
#include "cli.h"
#include "cli_args.h"
#include "cli_backend.h"
#include "export/atomic_write.h"
#include "export/figure_export.h"
#include "model_session.h"
#include "patching_figure.h"
#include "text_input.h"

#include <algorithm>
#include <cstdio>

namespace headlight::app {
namespace {

// TOKEN as one id: "#123" names an id, anything else must tokenize to exactly one token.
int tokenId(const QString& flag, const QString& token, const tokenize::Tokenizer* tokenizer) {
    if (token.startsWith('#')) {
        bool ok = false;
        const int id = token.mid(1).toInt(&ok);
        if (!ok)
            throw CliError(flag.toStdString() + ": '" + token.toStdString() + "' is not an id");
        return id;
    }
    if (!tokenizer)
        throw CliError(flag.toStdString() + ": the checkpoint has no tokenizer; name the token "
                                            "by id as #ID");
    const tokenize::Encoding encoding = tokenizer->encode(token.toStdString(), std::nullopt, false);
    if (encoding.ids.size() != 1)
        throw CliError(flag.toStdString() + ": '" + token.toStdString() + "' is " +
                       std::to_string(encoding.ids.size()) +
                       " tokens, not one (GPT-2 style vocabularies spell a word with its leading "
                       "space, ' Paris'; or give #ID)");
    return encoding.ids.front();
}

QString tokenLabel(const tokenize::Tokenizer* tokenizer, int id) {
    const std::string text = tokenizer ? tokenizer->tokenString(id) : std::string();
    return text.empty() ? QStringLiteral("#%1").arg(id) : QString::fromStdString(text);
}

// Progress on stderr, one line rewritten in place.
bool reportProgress(int done, int total) {
    std::fprintf(stderr, "\rheadlight patch: %d/%d passes", done, total);
    if (done == total) std::fputc('\n', stderr);
    return true;
}

int runPatch(const CliArgs& args) {
    const std::optional<PatchGrid> grid = patchGridFromName(args.required("--grid"));
    if (!grid) throw CliError("--grid: give layers×positions or layers×heads (or layersxheads)");
    const QString out = args.required("--out");
    std::optional<render::ImageFormat> format;
    if (args.has("--figure")) {
        format = render::imageFormatFor(args.value("--figure"));
        if (!format) throw CliError("--figure: give a .png, .svg or .pdf file");
    }
    const std::unique_ptr<LoadedModel> loaded = loadChosenModel(args, "patch");
    const tokenize::Tokenizer* tokenizer = loaded->tokenizer.get();
    const PreparedText clean = prepareText(tokenizer, args.required("--clean"));
    const PreparedText corrupt = prepareText(tokenizer, args.required("--corrupt"));
    PatchSetup setup{
        clean.input,  corrupt.input, tokenId("--target", args.required("--target"), tokenizer),
        std::nullopt, *grid,         {}};
    if (args.has("--foil")) setup.foil = tokenId("--foil", args.value("--foil"), tokenizer);
    const std::optional<PatchResult> result = runPatching(*loaded->model, setup, &reportProgress);
    std::fprintf(stderr, "headlight patch: logit difference clean %.6g, corrupt %.6g (%s - %s)\n",
                 result->cleanDifference, result->corruptDifference,
                 qPrintable(tokenLabel(tokenizer, result->target)),
                 qPrintable(tokenLabel(tokenizer, result->foil)));
    render::writeAtomically(out,
                            [&](QIODevice& file) { file.write(patchingCsv(*result).toUtf8()); });
    if (format) {
        render::ExportOptions options;
        // Why: a layers × positions grid of a small model is a few rows of many columns.
        if (*grid == PatchGrid::LayersByPositions)
            options.inches.setHeight(std::clamp(2.5 + 0.5 * result->rows, 3.0, 5.5));
        options.caption = {loaded->name(), QStringLiteral("vanilla"),
                           args.value("--clean") + QStringLiteral(" / ") + args.value("--corrupt")};
        render::exportFigure(args.value("--figure"), *format,
                             render::Figure{patchingFigure(*result, corrupt.labels,
                                                           tokenLabel(tokenizer, result->target),
                                                           tokenLabel(tokenizer, result->foil))},
                             options);
    }
    return 0;
}
} // namespace

CliCommand patchCommand() {
    return {
        QStringLiteral("patch"),
        QStringLiteral("activation patching: how much of a clean text's prediction each layer's "
                       "residual or head restores in a corrupted one"),
        {QStringLiteral(
            "--model DIR --clean STR --corrupt STR --target TOKEN [--foil TOKEN] "
            "--grid layers×positions|layers×heads --out FILE.csv "
            "[--figure FILE.png|svg|pdf] [--backend cpu|vulkan] [--vulkan-device SEL]")},
        {},
        {{"--model", "DIR",
          "a causal checkpoint with a tied LM head (folder, Hugging Face cache folder or cached "
          "ORG/NAME id, read offline)"},
         revisionOption(),
         {"--clean", "STR", "the clean text"},
         {"--corrupt", "STR", "the corrupted text, the same number of tokens as --clean"},
         {"--target", "TOKEN",
          "the token the logit difference rewards at the last position (one token of the "
          "vocabulary, or #ID)"},
         {"--foil", "TOKEN",
          "the token it is measured against (default: the corrupted run's top prediction)"},
         {"--grid", "layers×positions|layers×heads",
          "patch the residual stream entering each layer at each position, or each head's output "
          "at every position; one pass per cell"},
         {"--out", "FILE.csv",
          "write layer,position|head,recovered,logit_difference per cell, recovered = (patched - "
          "corrupt) / (clean - corrupt)"},
         {"--figure", "FILE.png", "also draw the grid as a heatmap (PNG, SVG or PDF)"},
         backendOption(),
         vulkanDeviceOption()},
        {QStringLiteral("headlight patch --model resources/models/rope --clean 'The key is 7. The "
                        "key is' --corrupt 'The key is 4. The key is' --target ' 7' --grid "
                        "layers×positions --out patch.csv --figure patch.png")},
        &runPatch,
    };
}
} // namespace headlight::app
