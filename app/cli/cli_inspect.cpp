// `headlight inspect`: one forward pass of a checkpoint on text or ids, with the attention of every
// layer and its analysis written to a safetensors dump and/or summarised as JSON. Its options:
// inspectCommand() at the end, which `headlight inspect --help` prints.
// With --variant the pass runs the X-former options of the spec (docs/variants.md) and the dump
// also holds the variant's internals: pass-wide ones by name, per-layer ones as "layer{l}.{name}".
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>
#include <cstdio>

#include "ablation_effect.h"
#include "analysis/divergence.h"
#include "cli.h"
#include "cli_args.h"
#include "cli_backend.h"
#include "cli_edits.h"
#include "corpus_analysis.h"
#include "cli_interrupt.h"
#include "io/hub_cache.h"
#include "io/safetensors.h"
#include "model/transformer.h"
#include "model/weight_quantization.h"
#include "text_input.h"
#include "tokenize/tokenizer.h"
#include "variants/knn_lm.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>
#include <cstdio>

namespace headlight::app {
namespace {

struct PreparedInput {
    ModelInput model;
    std::vector<std::string> tokens; // empty for --ids input
};

std::vector<int32_t> parseIntList(const QString& flag, const QString& text) {
    std::vector<int32_t> values;
    for (const QString& part : text.split(',', Qt::SkipEmptyParts)) {
        bool ok = false;
        const long long value = part.trimmed().toLongLong(&ok);
        if (!ok || value < INT32_MIN || value > INT32_MAX)
            throw CliError(flag.toStdString() + ": '" + part.toStdString() + "' is not an integer");
        values.push_back(int32_t(value));
    }
    if (values.empty()) throw CliError(flag.toStdString() + " is empty");
    return values;
}

PreparedInput prepareInput(const CliArgs& args, const std::string& folder) {
    PreparedInput prepared;
    if (args.has("--ids") == args.has("--text")) throw CliError("give exactly one of --text and --ids");
    if (args.has("--ids")) {
        prepared.model.ids = parseIntList("--ids", args.value("--ids"));
        if (args.has("--token-type-ids"))
            prepared.model.tokenTypes = parseIntList("--token-type-ids", args.value("--token-type-ids"));
        if (args.has("--attention-mask"))
            for (int32_t m : parseIntList("--attention-mask", args.value("--attention-mask")))
                prepared.model.attentionMask.push_back(m != 0);
        return prepared;
    }
    const std::string text = args.value("--text").toStdString();
    if (text.empty() && !args.has("--text-pair")) throw CliError("--text is empty: give some text to inspect");
    std::optional<std::string> pair;
    if (args.has("--text-pair")) pair = args.value("--text-pair").toStdString();
    const auto tokenizer = tokenize::Tokenizer::load(folder);
    const tokenize::Encoding encoding = tokenizer->encode(text, pair, !args.has("--no-special-tokens"));
    if (encoding.ids.empty()) throw CliError("the text produced no tokens");
    prepared.model.ids.assign(encoding.ids.begin(), encoding.ids.end());
    prepared.model.tokenTypes.assign(encoding.typeIds.begin(), encoding.typeIds.end());
    prepared.tokens = encoding.tokens;
    return prepared;
}

std::vector<float> valuesOf(const Tensor& t) { return {t.values().begin(), t.values().end()}; }

// Past this many bytes of maps a dump without --layers or --heads is refused: the full dump of a
// long text is L · H · T² floats (a 1B model at 2,048 tokens: 8.6 GB) that nobody reads at once.
constexpr double kDumpMapBytes = 256.0 * 1024 * 1024;

// The layers and heads --dump writes (--layers, --heads); empty: all.
struct DumpSelection {
    std::vector<int> layers, heads;
    bool any() const { return !layers.empty() || !heads.empty(); }
};

DumpSelection dumpSelection(const CliArgs& args) {
    DumpSelection selection;
    const auto list = [&](const char* flag) {
        const std::vector<int32_t> values = parseIntList(flag, args.value(flag));
        return std::vector<int>(values.begin(), values.end());
    };
    if (args.has("--layers")) selection.layers = list("--layers");
    if (args.has("--heads")) selection.heads = list("--heads");
    if (selection.any() && !args.has("--dump"))
        throw CliError("--layers and --heads choose what --dump writes: give --dump too");
    return selection;
}

// Refuses, before the pass, a dump of every map past kDumpMapBytes, with the bytes it would write.
void checkDumpSize(const DumpSelection& selection, const ModelSpec& spec, int64_t tokens) {
    if (selection.any()) return;
    const double bytes = double(spec.layers) * double(spec.heads) * double(tokens) *
                         double(tokens) * double(sizeof(float));
    if (bytes <= kDumpMapBytes) return;
    throw CliError("the dump would write " + QString::number(bytes, 'f', 0).toStdString() +
                   " bytes of attention maps (" + std::to_string(spec.layers) + " layers x " +
                   std::to_string(spec.heads) + " heads x " + std::to_string(tokens) +
                   "^2 tokens x 4 bytes), over 256 MiB: choose some with --layers L,... and/or "
                   "--heads H,...");
}

// The captured layers in the order asked for (all when none were), as one trace.
Trace selectedLayers(const Trace& trace, const DumpSelection& selection) {
    if (selection.layers.empty()) return trace;
    Trace selected;
    selected.ids = trace.ids;
    selected.valid = trace.valid;
    selected.internals = trace.internals;
    for (int l : selection.layers)
        selected.layers.push_back(trace.layers[std::size_t(l)]);
    return selected;
}

void writeDump(const std::string& path, const Trace& trace, const DumpSelection& selection) {
    const Tensor attentions = selectedLayers(trace, selection).stackedProbabilities();
    const Tensor entropy = analysis::attentionEntropy(attentions, trace.valid);
    const Tensor jsd = analysis::adjacentLayerJsd(attentions, trace.valid);
    std::vector<int64_t> ids(trace.ids.begin(), trace.ids.end());
    const int64_t tokens = int64_t(ids.size());
    std::vector<io::TensorToWrite> tensors{
        {"input_ids", {tokens}, {}, ids},
        {"attentions", attentions.shape(), valuesOf(attentions), {}},
        {"last_hidden_state", trace.lastHiddenState.shape(), valuesOf(trace.lastHiddenState), {}},
        {"entropy", entropy.shape(), valuesOf(entropy), {}},
        {"jsd_adjacent", jsd.shape(), valuesOf(jsd), {}},
    };
    const auto indices = [](const std::vector<int>& chosen) {
        return std::vector<int64_t>(chosen.begin(), chosen.end());
    };
    if (!selection.layers.empty())
        tensors.push_back({"attention_layers",
                           {int64_t(selection.layers.size())},
                           {},
                           indices(selection.layers)});
    if (!selection.heads.empty())
        tensors.push_back(
            {"attention_heads", {int64_t(selection.heads.size())}, {}, indices(selection.heads)});
    for (const auto& [name, tensor] : trace.internals) tensors.push_back({name, tensor.shape(), valuesOf(tensor), {}});
    for (std::size_t l = 0; l < trace.layers.size(); ++l) {
        if (trace.layers[l].probabilities.empty()) continue; // not selected
        // A funnel's pooled map as computed; `attentions` holds it per token.
        const Tensor& map = trace.layers[l].probabilities;
        if (map.dim(1) != tokens || map.dim(2) != tokens)
            tensors.push_back(
                {"layer" + std::to_string(l) + ".attention", map.shape(), valuesOf(map), {}});
        for (const auto& [name, tensor] : trace.layers[l].internals)
            tensors.push_back({"layer" + std::to_string(l) + "." + name, tensor.shape(), valuesOf(tensor), {}});
    }
    io::writeSafetensors(path, tensors);
}

QJsonArray shapeJson(const std::vector<int64_t>& shape) {
    QJsonArray array;
    for (int64_t d : shape) array.append(double(d));
    return array;
}

QJsonObject summaryJson(const std::string& folder, const TransformerModel& model,
                        const PreparedInput& input, const Trace& trace,
                        const std::vector<double>& times, const std::string& note,
                        const DumpSelection& selection) {
    const ModelSpec& s = model.spec();
    QJsonArray ids, tokens, forwardMs;
    for (int32_t id : input.model.ids) ids.append(id);
    for (const std::string& t : input.tokens) tokens.append(QString::fromStdString(t));
    for (double ms : times) forwardMs.append(ms);
    const int64_t t = int64_t(trace.ids.size());
    const int64_t layers = selection.layers.empty() ? s.layers : int64_t(selection.layers.size());
    const int64_t heads = selection.heads.empty() ? s.heads : int64_t(selection.heads.size());
    QJsonObject shapes{{"input_ids", shapeJson({t})},
                       {"attentions", shapeJson({layers, heads, t, t})},
                       {"last_hidden_state", shapeJson(trace.lastHiddenState.shape())},
                       {"entropy", shapeJson({layers, heads, t})},
                       {"jsd_adjacent", shapeJson({std::max<int64_t>(layers - 1, 0), heads, t})}};
    QJsonObject root{{"model", QString::fromStdString(folder)},
                     {"architecture", architectureName(s.architecture)},
                     {"layers", s.layers},
                     {"heads", s.heads},
                     {"hidden", s.hidden},
                     {"ids", ids},
                     {"shapes", shapes},
                     {"backend", backendName(model.backend().kind())},
                     {"device", QString::fromStdString(model.backend().deviceName())},
                     {"forward_ms", forwardMs}};
    if (!input.tokens.empty()) root["tokens"] = tokens;
    if (!note.empty()) root["backend_note"] = QString::fromStdString(note);
    return root;
}

struct Run {
    Trace trace;
    std::vector<double> times;
};

// A knn variant's datastore: its text in the checkpoint's own tokens, chunked to the model's positions.
variants::KnnDatastore loadDatastore(const TransformerModel& model, const std::string& folder,
                                     const variants::VariantSpec& variant) {
    const std::string text = variants::readDatastoreText(variant.knn->datastore);
    const tokenize::Encoding encoding = tokenize::Tokenizer::load(folder)->encode(text, std::nullopt, false);
    const std::vector<int32_t> ids(encoding.ids.begin(), encoding.ids.end());
    return variants::buildDatastore(
        model, variants::chunkForDatastore(ids, variants::datastoreChunkLength(model.spec())), variant);
}

Run runRepeated(const TransformerModel& model, const ModelInput& input,
                const variants::VariantSpec& variant, int repeat, const std::string& folder,
                const variants::Intervention& intervention, const DumpSelection& selection) {
    checkDumpSize(selection, model.spec(), int64_t(input.ids.size()));
    CaptureRequest capture;
    capture.internals = !variant.isVanilla();
    capture.layers = selection.layers;
    capture.heads = selection.heads;
    std::optional<variants::KnnDatastore> datastore;
    if (variant.knn) datastore = loadDatastore(model, folder, variant);
    const PassControl control = interruptiblePass("headlight inspect", int64_t(input.ids.size()));
    Run run;
    for (int i = 0; i < repeat; ++i) {
        run.trace = datastore ? variants::forwardKnn(model, input, capture, variant, *datastore)
                              : model.forward(input, capture, variant, intervention, control);
        run.times.push_back(run.trace.forwardMs);
    }
    return run;
}

QString quotedToken(const tokenize::Tokenizer* tokenizer, int id) {
    const std::string text = tokenizer ? tokenizer->tokenString(id) : std::string();
    return text.empty() ? QStringLiteral("#%1").arg(id)
                        : QStringLiteral("'%1'").arg(QString::fromStdString(text));
}

// The output change of --ablate: a table on stdout, or (with --json) an object in the summary.
QJsonObject ablationJson(const AblationEffect& effect, const std::string& heads) {
    QJsonArray positions;
    for (const PositionChange& change : effect.positions)
        positions.append(QJsonObject{{"kl", change.kl},
                                     {"clean_top", change.cleanTop},
                                     {"ablated_top", change.ablatedTop},
                                     {"clean_top_probability", change.cleanTopProbability},
                                     {"ablated_top_probability", change.ablatedTopProbability},
                                     {"top5_flips", change.topKFlips}});
    return {{"heads", QString::fromStdString(heads)}, {"positions", positions}};
}

// `what` heads the table: the ablated heads and/or the residual edits, one per line.
void printAblation(const AblationEffect& effect, const QStringList& what, const char* changed,
                   const PreparedInput& input, const tokenize::Tokenizer* tokenizer) {
    QTextStream out(stdout);
    for (const QString& line : what)
        out << line << "\n";
    out << "pos\ttoken\tKL(clean||" << changed << ")\ttop-1 clean -> " << changed << "\n";
    for (std::size_t t = 0; t < effect.positions.size(); ++t) {
        const PositionChange& c = effect.positions[t];
        const QString token = t < input.tokens.size() ? QString::fromStdString(input.tokens[t])
                                                      : QString::number(input.model.ids[t]);
        out << t << "\t" << token << "\t" << QString::number(c.kl, 'g', 6) << "\t"
            << quotedToken(tokenizer, c.cleanTop) << " ("
            << QString::number(c.cleanTopProbability, 'f', 3) << ") -> "
            << quotedToken(tokenizer, c.ablatedTop) << " ("
            << QString::number(c.ablatedTopProbability, 'f', 3) << ")" << (c.flipped() ? "  *" : "")
            << "\n";
    }
    const OutputChangeSummary summary = summarizeOutputChange(effect.positions);
    out << "mean KL " << QString::number(summary.meanKl, 'g', 6) << ", top-1 changed at "
        << summary.flipped << " of " << effect.positions.size() << " positions, mean top-"
        << kOutputChangeTopK << " flips " << QString::number(summary.meanTopKFlips, 'g', 4)
        << "\n";
}

// The checkpoint's tokenizer, or null when it has none (texts are then token ids).
std::unique_ptr<tokenize::Tokenizer> tokenizerIfAny(const std::string& folder) {
    try {
        return tokenize::Tokenizer::load(folder);
    } catch (const tokenize::TokenizerError&) {
        return nullptr; // Why: a checkpoint without tokenizer files runs on ids
    }
}

// Progress of the corpus means on stderr, one line rewritten in place.
bool reportMeansProgress(int done, int total) {
    std::fprintf(stderr, "\rheadlight inspect: corpus head means %d/%d texts", done, total);
    if (done == total) std::fputc('\n', stderr);
    return true;
}

// --ablate's heads as the pass applies them: replace ones from --replace-text's pass,
// mean-corpus ones from the head means over --ablation-corpus.
variants::Intervention ablationsFor(const CliArgs& args, const TransformerModel& model,
                                    const std::string& folder, const variants::VariantSpec& variant,
                                    const std::vector<variants::HeadAblationSpec>& ablations,
                                    int64_t tokens) {
    const auto uses = [&](variants::AblationMode mode) {
        return std::any_of(ablations.begin(), ablations.end(),
                           [mode](const auto& a) { return a.mode == mode; });
    };
    const bool replaces = uses(variants::AblationMode::Replace);
    const bool corpusMeans = uses(variants::AblationMode::CorpusMean);
    if (replaces != args.has("--replace-text"))
        throw CliError(replaces ? "--ablate L.H:replace needs --replace-text (the text whose head "
                                  "outputs replace the ablated ones)"
                                : "--replace-text is only read by --ablate L.H:replace");
    if (corpusMeans != args.has("--ablation-corpus"))
        throw CliError(corpusMeans ? "--ablate L.H:mean-corpus needs --ablation-corpus FILE"
                                   : "--ablation-corpus is only read by --ablate L.H:mean-corpus");
    const std::unique_ptr<tokenize::Tokenizer> tokenizer =
        replaces || corpusMeans ? tokenizerIfAny(folder) : nullptr;
    std::optional<ModelInput> source;
    if (replaces) source = prepareText(tokenizer.get(), args.value("--replace-text")).input;
    std::optional<CorpusHeadMeans> means;
    if (corpusMeans) {
        const QString path = args.value("--ablation-corpus");
        QStringList texts;
        try {
            texts = readCorpus(path);
        } catch (const std::exception& error) {
            throw CliError("--ablation-corpus " + path.toStdString() + ": " + error.what());
        }
        means = corpusHeadMeans(model, tokenizer.get(), variant, texts, &reportMeansProgress);
    }
    return resolveAblations(model, variant, ablations, source ? &*source : nullptr, tokens,
                            means ? &*means : nullptr);
}

// --weights: "stored" (the default: the checkpoint's dtype, mapped) or "int8".
bool wantsInt8Weights(const CliArgs& args) {
    const QString weights =
        args.has("--weights") ? args.value("--weights") : QStringLiteral("stored");
    if (weights != "stored" && weights != "int8")
        throw CliError("--weights '" + weights.toStdString() + "' is not one of stored, int8");
    return weights == "int8";
}

int runInspect(const CliArgs& args) {
    const std::string folder = io::resolveModel(args.model().toStdString()).folder;
    checkResidualEditArguments(args);
    if (!args.has("--dump") && !args.has("--json") && !args.has("--ablate") &&
        !wantsResidualEdits(args))
        throw CliError("nothing to do: give --dump FILE and/or --json (or --ablate HEADS, or an "
                       "edit: --sae DIR with --clamp/--steer/--splice, --steering-vector FILE)");
    const std::vector<variants::HeadAblationSpec> ablations =
        args.has("--ablate") ? variants::parseAblations(args.value("--ablate").toStdString())
                             : std::vector<variants::HeadAblationSpec>{};
    const int repeat = args.integer("--repeat", 1, 1, 100000);
    const bool int8 = wantsInt8Weights(args);
    const auto load = [&](Backend& backend) {
        return int8 ? loadModelInt8(folder, backend) : loadModel(folder, backend);
    };
    const PreparedInput input = prepareInput(args, folder);
    const DumpSelection selection = dumpSelection(args);
    const variants::VariantSpec variant =
        args.has("--variant") ? variants::loadVariantSpec(args.value("--variant").toStdString())
                              : variants::VariantSpec{};

    OpenedBackend opened = openChosenBackend(args);
    std::unique_ptr<TransformerModel> model;
    Run run;
    variants::Intervention intervention;
    CliResidualEdits edits;
    runWithCpuFallback(opened, model, [&] {
        model = load(*opened.backend);
        intervention =
            ablationsFor(args, *model, folder, variant, ablations, int64_t(input.model.ids.size()));
        edits = residualEditsFor(args, model->spec());
        intervention.edits = edits.edits;
        run = runRepeated(*model, input.model, variant, repeat, folder, intervention, selection);
    });
    if (!opened.note.empty()) std::fprintf(stderr, "headlight inspect: %s\n", opened.note.c_str());
    std::optional<AblationEffect> effect;
    std::unique_ptr<tokenize::Tokenizer> tokenizer;
    if (!ablations.empty() || !edits.empty()) {
        effect = runAblation(*model, input.model, variant, intervention);
        if (!input.tokens.empty()) tokenizer = tokenize::Tokenizer::load(folder);
    }
    const std::string heads = variants::ablationText(ablations);
    QStringList what = edits.descriptions;
    if (!ablations.empty()) what.prepend("ablated heads " + QString::fromStdString(heads));
    if (args.has("--dump")) writeDump(args.value("--dump").toStdString(), run.trace, selection);
    if (effect && !args.has("--json"))
        printAblation(*effect, what, edits.empty() ? "ablated" : "edited", input, tokenizer.get());
    if (args.has("--json")) {
        QJsonObject summary =
            summaryJson(folder, *model, input, run.trace, run.times, opened.note, selection);
        if (effect && !ablations.empty()) summary["ablation"] = ablationJson(*effect, heads);
        if (effect && !edits.empty()) {
            QJsonObject change = ablationJson(*effect, heads);
            change.remove("heads");
            change["edits"] = edits.json;
            summary["edits"] = change;
        }
        QTextStream(stdout) << QJsonDocument(summary).toJson(QJsonDocument::Indented);
    }
    return 0;
}
} // namespace

CliCommand inspectCommand() {
    CliCommand command{
        QStringLiteral("inspect"),
        QStringLiteral("run a checkpoint on text or ids; dump attentions and their analysis"),
        {QStringLiteral(
            "--model DIR (--text STR [--text-pair STR] [--no-special-tokens] | --ids "
            "1,2,3 [--token-type-ids 0,0,1] [--attention-mask 1,1,0]) "
            "[--variant SPEC.json] [--backend cpu|vulkan] [--vulkan-device SEL] "
            "[--ablate L.H[:zero|mean|mean-corpus|replace],... [--ablation-corpus FILE] "
            "[--replace-text STR]] [--sae DIR [--clamp F=V]... [--steer F=A]... "
            "[--splice with-error|no-error]] [--steering-vector FILE [--strength A]] "
            "[--weights stored|int8] [--repeat N] [--dump OUT.safetensors "
            "[--layers L,...] [--heads H,...]] [--json]")},
        {},
        {{"--model", "DIR",
          "the checkpoint folder (Hugging Face safetensors or the zoo's format), or a Hugging Face "
          "cache folder or cached ORG/NAME id, read offline"},
         revisionOption(),
         {"--text", "STR", "the text to run, tokenized by the checkpoint's tokenizer"},
         {"--text-pair", "STR", "a second segment, for models that take sentence pairs"},
         {"--no-special-tokens", {}, "leave out the tokenizer's special tokens ([CLS], <s>, ...)"},
         {"--ids", "1,2,3", "token ids to run instead of a text"},
         {"--token-type-ids", "0,0,1", "the segment of each of --ids"},
         {"--attention-mask", "1,1,0", "which of --ids are attended to (0: padding)"},
         {"--variant", "SPEC.json",
          "run these X-former options (docs/variants.md); the dump adds their internals"},
         {"--ablate", "L.H[:zero|mean|mean-corpus|replace],...",
          "knock out these heads (layer.head from 0) and print the output change per position: "
          "KL(clean || ablated) and the top-1 prediction (causal models with a tied LM head); the "
          "dump holds the ablated pass. A head's output becomes zero, its mean over the text's "
          "positions (mean), its mean over every position of --ablation-corpus (mean-corpus), or "
          "its output on --replace-text (replace: activation patching of one head)"},
         {"--ablation-corpus", "FILE",
          "the texts, one per line, whose head outputs mean-corpus ablation averages (token ids "
          "when the checkpoint has no tokenizer); one pass per text, with progress on stderr"},
         {"--replace-text", "STR",
          "the text whose head outputs replace ablation puts in; it must have as many tokens as "
          "the text (token ids when the checkpoint has no tokenizer)"},
         backendOption(),
         vulkanDeviceOption(),
         {"--weights", "stored|int8",
          "stored (default): the weights in the checkpoint's dtype, mapped; int8: every linear "
          "layer's weight quantised to int8 per output channel at load (headlight info "
          "--weights int8 reports the error per layer)"},
         {"--repeat", "N", "run the pass N times, 1 to 100000, and report each time (default 1)"},
         {"--dump", "OUT.safetensors",
          "write every layer's attention with its entropy and adjacent-layer JSD (docs/engine.md); "
          "past 256 MiB of maps it is refused unless --layers or --heads choose some"},
         {"--layers", "L,...",
          "dump only these layers (from 0), in this order: attentions [layers, heads, T, T], "
          "entropy of each, JSD between each listed layer and the next listed, and "
          "attention_layers naming them"},
         {"--heads", "H,...",
          "dump only these heads (from 0) of each layer, in this order, and attention_heads "
          "naming them"},
         {"--json", {}, "print a summary as JSON on stdout"}},
        {QStringLiteral("headlight inspect --model resources/models/realformer --text 'The cat "
                        "sat on the mat.' --dump out.safetensors --json"),
         QStringLiteral("headlight inspect --model resources/models/rope --text 'The key is 7. "
                        "The key is' --ablate 1.0,1.2:mean"),
         QStringLiteral("headlight inspect --model tests/data/models/gpt2_plain --ids 57,88,89 "
                        "--sae tests/data/sae/gpt2_plain_standard_pre0 --clamp 37=0 --splice "
                        "with-error")},
        &runInspect,
    };
    const std::vector<CliOption> edits = residualEditOptions();
    command.options.insert(command.options.end() - 1, edits.begin(), edits.end());
    return command;
}
} // namespace headlight::app
