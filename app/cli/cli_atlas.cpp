// `headlight export --view atlas`: a region of one head's (or a layer's mean) attention map at
// any text length, pooled into tiles by core/analysis/attention_atlas.h from the layer's queries
// and keys, never a T × T matrix. The region is cut into at most kAtlasCellsPerSide tiles a side
// (a power of two tokens each); at one token a tile the cells are the exact attention weights and
// carry the token labels. app/figures/atlas_figure.h draws it, as the window's Atlas view does.
// Progress of the pass over the map goes to stderr.
#include "cli_atlas.h"

#include "analysis/atlas_variant.h"
#include "analysis/attention_atlas.h"
#include "atlas_export.h"
#include "cli_args.h"
#include "counted.h"
#include "model_session.h"
#include "scene_files.h"
#include "text_input.h"

#include <QFile>
#include <QFileInfo>
#include <cstdio>
#include <optional>

namespace headlight::app {
namespace {

// "Q0:Q1,K0:K1" → the region, checked against the text's length.
analysis::AtlasRegion parseRegion(const QString& text, int64_t tokens) {
    const QStringList axes = text.split(QLatin1Char(','));
    std::vector<int64_t> bounds;
    for (const QString& axis : axes)
        for (const QString& bound : axis.split(QLatin1Char(':'))) {
            bool ok = false;
            bounds.push_back(bound.trimmed().toLongLong(&ok));
            if (!ok) bounds.push_back(-1);
        }
    const analysis::AtlasRegion region =
        bounds.size() == 4 ? analysis::AtlasRegion{bounds[0], bounds[1], bounds[2], bounds[3]}
                           : analysis::AtlasRegion{-1, -1, -1, -1};
    if (region.q0 < 0 || region.k0 < 0 || region.q0 >= region.q1 || region.k0 >= region.k1)
        throw CliError("--region must be Q0:Q1,K0:K1 (token positions, end excluded, e.g. "
                       "0:512,0:512), not '" +
                       text.toStdString() + "'");
    if (region.q1 > tokens || region.k1 > tokens)
        throw CliError("--region " + text.toStdString() + " goes past the text's " +
                       std::to_string(tokens) + " tokens");
    return region;
}

analysis::TilePooling parsePooling(const QString& text) {
    if (text == QLatin1String("mean")) return analysis::TilePooling::Mean;
    if (text == QLatin1String("max")) return analysis::TilePooling::Max;
    throw CliError("--pool must be mean or max, not '" + text.toStdString() + "'");
}

QString readTextFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw CliError("cannot read --text-file " + path.toStdString() + ": " +
                       file.errorString().toStdString());
    return QString::fromUtf8(file.readAll());
}
} // namespace

QString exportText(const CliArgs& args) {
    if (args.has("--text-file")) return readTextFile(args.value("--text-file"));
    return args.value("--text");
}

io::Scenario atlasExportScenario(const CliArgs& args) {
    io::Scenario scenario;
    scenario.model = sceneModelName(args.model());
    scenario.view = "atlas";
    scenario.text = exportText(args).toStdString(); // whole, so that reproduce runs the same text
    scenario.selection.layer = args.has("--layer") ? args.value("--layer").toInt() : 0;
    scenario.selection.average = args.value("--head") == QLatin1String("mean");
    scenario.selection.head =
        scenario.selection.average || !args.has("--head") ? 0 : args.value("--head").toInt();
    if (args.has("--variant")) scenario.variant = loadVariantFile(args.value("--variant")).json;
    if (args.has("--backend")) scenario.backend = args.backend();
    return scenario;
}

int runAtlasExport(const CliArgs& args, render::ExportOptions options,
                   const QStringList& regenerationCommand) {
    for (const char* flag : {"--texts", "--scene", "--scenario"})
        if (args.has(flag))
            throw CliError(std::string("--view atlas draws the attention of one text: leave out ") +
                           flag);
    if (args.has("--text") == args.has("--text-file"))
        throw CliError("give exactly one of --text and --text-file");
    const QString out = args.required("--out");
    if (args.has("--overlay") && args.value("--overlay") != QLatin1String("mask"))
        throw CliError("--overlay must be mask, not '" + args.value("--overlay").toStdString() +
                       "'");
    const QString folder = args.model();
    const analysis::TilePooling pooling =
        parsePooling(args.has("--pool") ? args.value("--pool") : QStringLiteral("mean"));
    const std::string selector = args.value("--vulkan-device").toStdString();
    const std::optional<BackendKind> backend =
        args.has("--backend") ? std::optional<BackendKind>(args.backend()) : std::nullopt;
    VariantFile variant;
    if (args.has("--variant")) variant = loadVariantFile(args.value("--variant"));
    const std::shared_ptr<const LoadedModel> loaded =
        loadCheckpoint(folder, chooseBackend(backend, selector), selector);
    const ModelSpec& spec = loaded->model->spec();
    const int layer = args.integer("--layer", 0, 0, spec.layers - 1);
    const bool mean = args.value("--head") == QLatin1String("mean");
    const int head =
        mean ? analysis::AttentionAtlas::kAllHeads : args.integer("--head", 0, 0, spec.heads - 1);
    const PreparedText prepared = prepareText(loaded->tokenizer.get(), exportText(args));
    const auto tokens = int64_t(prepared.input.ids.size());
    if (tokens == 0) throw CliError("the text produced no tokens");
    const analysis::AtlasRegion region = args.has("--region")
                                             ? parseRegion(args.value("--region"), tokens)
                                             : analysis::AtlasRegion{0, tokens, 0, tokens};
    std::fprintf(stderr, "headlight export: %s, forward pass...\n",
                 qPrintable(counted(int(tokens), QStringLiteral("token"))));
    CaptureRequest capture;
    capture.probabilities = false;
    capture.queriesKeys = true;
    capture.layers = {layer};
    capture.finalState = false; // the layers after `layer` cannot change its map: they do not run
    const Trace trace = loaded->model->forward(prepared.input, capture, variant.spec);
    const LayerTrace& captured = trace.layers[std::size_t(layer)];
    analysis::AtlasInput input =
        analysis::atlasInputOf(captured, spec, trace.valid, variant.spec, layer);
    const auto progress = [](double done) {
        std::fprintf(stderr, "\rheadlight export: atlas %3d%%", int(done * 100.0 + 0.5));
        if (done >= 1.0) std::fputc('\n', stderr);
        return true;
    };
    const analysis::AttentionAtlas atlas(std::move(input), head, progress);
    const AtlasExport drawn =
        atlasExport(atlas, region, pooling, prepared.labels, layer, args.has("--overlay"));
    const io::Scenario scenario = atlasExportScenario(args);
    options.caption = atlasCaption(*loaded, exportText(args), tokens);
    if (args.has("--variant"))
        options.caption.variant = QFileInfo(args.value("--variant")).completeBaseName();
    options.provenance = atlasProvenance(*loaded, scenario, drawn.figure, regenerationCommand);
    writeAtlasExport(out, drawn, options, regenerationCommand);
    return 0;
}
} // namespace headlight::app
