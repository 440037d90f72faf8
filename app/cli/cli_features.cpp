// `headlight features`: one forward pass of a checkpoint on text or ids, the activations at a
// published SAE's hook read from the trace (a transcoder's target from a second pass at its
// output hook), and every token's strongest features with the SAE's reconstruction quality
// (docs/features.md). The pass runs on the chosen backend; the SAE encodes on the CPU. Its
// options: featuresCommand() at the end.
#include "analysis/sae_hook.h"
#include "analysis/sparse_autoencoder.h"
#include "cli.h"
#include "cli_args.h"
#include "cli_backend.h"
#include "cli_text_input.h"
#include "corpus_analysis.h"
#include "corpus_shard.h"
#include "feature_analysis.h"
#include "feature_labels.h"
#include "feature_scan.h"
#include "file_hashes.h"
#include "io/hub_cache.h"
#include "io/sae_folder.h"
#include "io/safetensors.h"
#include "model/transformer.h"
#include "tokenize/tokenizer.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

namespace headlight::app {
namespace {

struct FeaturesRun {
    std::string modelFolder;
    std::string saeFolder;
    io::SaeFolder sae;
    CliTextInput input;
    analysis::SaeEncoding encoding;
    analysis::ReconstructionQuality quality;
    double passMs = 0.0;
    double encodeMs = 0.0;
    const char* backend = "cpu";
    int top = 5;
    std::optional<FeatureLabels> labels; // --labels
};

QJsonObject saeJson(const FeaturesRun& run) {
    const io::SaeConfig& c = run.sae.config;
    QJsonObject sae{{"folder", QString::fromStdString(run.saeFolder)},
                    {"layout", QString::fromStdString(c.layout)},
                    {"architecture", analysis::saeArchitectureName(c.architecture)},
                    {"d_in", c.dIn},
                    {"d_sae", c.dSae},
                    {"hook", QString::fromStdString(c.hookName)},
                    {"transcoder", !c.hookOutName.empty()},
                    {"apply_b_dec_to_input", c.applyBDecToInput},
                    {"normalize_activations", analysis::saeNormalizationName(c.normalization)}};
    if (c.architecture == analysis::SaeArchitecture::TopK) {
        sae["k"] = c.k;
        sae["rescale_acts_by_decoder_norm"] = c.rescaleByDecoderNorm;
    }
    if (run.sae.sae.scalingFactor) sae["scaling_factor"] = *run.sae.sae.scalingFactor;
    if (!c.hookOutName.empty()) {
        sae["hook_out"] = QString::fromStdString(c.hookOutName);
        sae["affine_skip"] = c.affineSkip;
    }
    return sae;
}

QJsonObject featuresJson(const FeaturesRun& run) {
    QJsonArray tokens;
    const Tensor& f = run.encoding.features;
    for (int64_t t = 0; t < f.dim(0); ++t) {
        QJsonArray top;
        for (const FeatureActivation& feature : strongestFeatures(f, t, run.top)) {
            QJsonObject entry{{"id", feature.feature}, {"activation", double(feature.activation)}};
            if (run.labels && !run.labels->of(feature.feature).isEmpty())
                entry["label"] = run.labels->of(feature.feature);
            top.append(entry);
        }
        tokens.append(QJsonObject{{"position", int(t)},
                                  {"id", run.input.model.ids[std::size_t(t)]},
                                  {"token", run.input.labels.value(int(t))},
                                  {"l0", firingFeatures(f, t)},
                                  {"features", top}});
    }
    QJsonArray notes;
    for (const std::string& note : run.sae.notes)
        notes.append(QString::fromStdString(note));
    const auto number = [](double v) { return std::isfinite(v) ? QJsonValue(v) : QJsonValue(); };
    return {{"model", QString::fromStdString(run.modelFolder)},
            {"backend", run.backend},
            {"sae", saeJson(run)},
            {"notes", notes},
            {"reconstruction",
             QJsonObject{{"variance_explained", number(run.quality.varianceExplained)},
                         {"mse", number(run.quality.meanSquaredError)},
                         {"l0", number(run.quality.meanL0)}}},
            {"timing_ms", QJsonObject{{"pass", run.passMs}, {"encode", run.encodeMs}}},
            {"tokens", tokens}};
}

void printFeatures(const FeaturesRun& run) {
    QTextStream out(stdout);
    const io::SaeConfig& c = run.sae.config;
    out << "model: " << QString::fromStdString(run.modelFolder) << " (" << run.backend << ")\n";
    out << "sae: " << QString::fromStdString(run.saeFolder) << " ("
        << analysis::saeArchitectureName(c.architecture) << ", d_in " << c.dIn << ", d_sae "
        << c.dSae << ", " << QString::fromStdString(c.hookName);
    if (!c.hookOutName.empty())
        out << " → " << QString::fromStdString(c.hookOutName) << ", a transcoder"
            << (c.affineSkip ? " with an affine skip" : "");
    out << ")\n";
    for (const std::string& note : run.sae.notes)
        out << "note: " << QString::fromStdString(note) << "\n";
    out << "reconstruction: variance explained "
        << QString::number(run.quality.varianceExplained, 'f', 4) << ", MSE "
        << QString::number(run.quality.meanSquaredError, 'g', 5) << ", L0 "
        << QString::number(run.quality.meanL0, 'f', 2) << " features per token\n";
    out << "pass " << QString::number(run.passMs, 'f', 1) << " ms, encoding "
        << QString::number(run.encodeMs, 'f', 1) << " ms (CPU)\n";
    out << "  pos  token                 L0  top features (id: activation)\n";
    const Tensor& f = run.encoding.features;
    for (int64_t t = 0; t < f.dim(0); ++t) {
        QString label = run.input.labels.value(int(t));
        if (label.isEmpty()) label = QStringLiteral("#%1").arg(run.input.model.ids[std::size_t(t)]);
        if (label.size() > 20) label = label.left(19) + QStringLiteral("…");
        out << QString::number(t).rightJustified(5) << "  " << label.leftJustified(20) << " "
            << QString::number(firingFeatures(f, t)).rightJustified(3) << " ";
        for (const FeatureActivation& feature : strongestFeatures(f, t, run.top)) {
            out << " " << feature.feature << ": " << QString::number(feature.activation, 'f', 4);
            if (run.labels && !run.labels->of(feature.feature).isEmpty())
                out << " (" << run.labels->of(feature.feature) << ")";
        }
        out << "\n";
    }
}

void dumpFeatures(const QString& path, const FeaturesRun& run) {
    const auto values = [](const Tensor& t) {
        return std::vector<float>(t.values().begin(), t.values().end());
    };
    const analysis::SaeEncoding& e = run.encoding;
    std::vector<io::TensorToWrite> tensors = {
        {"feature_acts", e.features.shape(), values(e.features), {}, {}, {}},
        {"sae_in", e.input.shape(), values(e.input), {}, {}, {}},
        {"sae_out", e.output.shape(), values(e.output), {}, {}, {}}};
    if (!e.target.empty())
        tensors.push_back({"sae_target", e.target.shape(), values(e.target), {}, {}, {}});
    io::writeSafetensors(
        path.toStdString(), tensors,
        {{"hook", run.sae.config.hookName},
         {"architecture", analysis::saeArchitectureName(run.sae.config.architecture)}});
}

analysis::SaeHook featuresHook(const std::string& name, const ModelSpec& spec) {
    try {
        return analysis::parseSaeHook(name, spec.layers, spec.sandwichNorms);
    } catch (const std::invalid_argument& error) {
        throw CliError(error.what());
    }
}

// Values per token at the hook: attention's heads side by side at hook_z, else the residual
// stream's width.
int featuresHookWidth(const analysis::SaeHook& hook, const ModelSpec& spec) {
    return hook.point == analysis::SaeHook::Point::AttnZ ? spec.heads * spec.headDim : spec.hidden;
}

void checkHookWidth(const std::string& hookName, int width, int dIn) {
    if (dIn != width)
        throw CliError("the SAE reads " + std::to_string(dIn) + " values per token at " + hookName +
                       " but the model gives " + std::to_string(width) + " there");
}

// One pass captured for `hook`, and the activations there; the pass's time is added up.
Tensor featuresActivations(const TransformerModel& model, FeaturesRun& run,
                           const analysis::SaeHook& hook, const std::string& hookName) {
    const int layers = model.spec().layers;
    const Trace trace = model.forward(run.input.model, analysis::captureForHook(hook, layers));
    run.passMs += trace.forwardMs;
    try {
        return analysis::activationsAtHook(trace, hook, layers);
    } catch (const std::invalid_argument& error) {
        throw CliError("the SAE reads " + hookName + ": " + error.what());
    }
}

FeatureLabels labelsOf(const CliArgs& args) {
    try {
        return readFeatureLabels(args.value("--labels"));
    } catch (const FeatureLabelsError& error) {
        throw CliError(std::string("--labels ") + error.what());
    }
}

// --scan CORPUS: every text (of shard --shard i/n) through the model at the SAE's hook, each
// feature's strongest contexts and firing count written to --out.
int runScan(const CliArgs& args) {
    const QString corpus = args.value("--scan");
    const QString out = args.required("--out");
    QStringList texts;
    try {
        texts = readCorpus(corpus);
    } catch (const std::exception& error) {
        throw CliError("--scan " + std::string(error.what()));
    }
    if (texts.isEmpty()) throw CliError("--scan " + corpus.toStdString() + " has no text");
    FeatureScanRequest request;
    if (args.has("--shard")) try {
            request.place = parseShardPlace(args.value("--shard"));
        } catch (const std::invalid_argument& error) {
            throw CliError(std::string("--shard ") + error.what());
        }
    const auto [first, end] = shardTexts(request.place, std::size_t(texts.size()));
    request.texts = texts.mid(qsizetype(first), qsizetype(end - first));
    request.firstIndex = int64_t(first);
    std::shared_ptr<const AttachedSae> sae;
    try {
        sae = attachSae(args.required("--sae")); // a cache id resolved there
    } catch (const std::exception& refused) {
        throw CliError(std::string("--sae ") + refused.what());
    }
    request.contexts = args.integer("--contexts", 10, 1, 1000);
    const std::string modelFolder = io::resolveModel(args.model().toStdString()).folder;
    request.settings = {{"model", QFileInfo(QString::fromStdString(modelFolder)).fileName()},
                        {"sae", sae->name()},
                        {"corpus", QFileInfo(corpus).fileName()},
                        {"corpus_sha256", fileSha256(corpus)}};
    OpenedBackend opened = openChosenBackend(args);
    std::unique_ptr<TransformerModel> model;
    FeatureScan scan;
    const auto start = std::chrono::steady_clock::now();
    runWithCpuFallback(opened, model, [&] {
        model = loadModel(modelFolder, *opened.backend);
        const std::unique_ptr<tokenize::Tokenizer> tokenizer = optionalTokenizer(modelFolder);
        try {
            scan = scanFeatures(*model, tokenizer.get(), *sae, request);
        } catch (const std::invalid_argument& error) {
            throw CliError("the SAE " + sae->name().toStdString() + ": " + error.what());
        }
    });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!opened.note.empty()) std::fprintf(stderr, "headlight features: %s\n", opened.note.c_str());
    try {
        writeFeatureScan(out, scan);
    } catch (const FeatureScanError& error) {
        throw CliError(error.what());
    }
    const int64_t firing = std::count_if(scan.fired.begin(), scan.fired.end(),
                                         [](int64_t count) { return count > 0; });
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    QTextStream stdOut(stdout);
    stdOut << "scanned " << scan.texts << " texts (" << scan.tokens << " tokens) of "
           << QFileInfo(corpus).fileName() << " shard " << request.place.index << "/"
           << request.place.count << " on " << backendName(model->backend().kind()) << " in "
           << QString::number(seconds, 'f', 2)
           << " s: " << QString::number(double(scan.tokens) / seconds, 'f', 0) << " tokens/s, "
           << QString::number(double(scan.tokens) / seconds / cores, 'f', 0) << " per core of "
           << cores << "\n";
    for (const QString& failed : scan.failed)
        stdOut << "skipped " << failed << "\n";
    stdOut << firing << " of " << scan.fired.size() << " features fire; wrote " << out << "\n";
    return 0;
}

int runFeatures(const CliArgs& args) {
    if (args.has("--scan")) {
        for (const char* flag : {"--text", "--ids", "--dump", "--json", "--top", "--labels"})
            if (args.has(flag))
                throw CliError(std::string(flag) + " is not for --scan, which reads the corpus");
        return runScan(args);
    }
    for (const char* flag : {"--out", "--contexts", "--shard"})
        if (args.has(flag)) throw CliError(std::string(flag) + " is for --scan CORPUS");
    FeaturesRun run;
    if (args.has("--labels")) run.labels = labelsOf(args);
    run.saeFolder = io::resolveCachedSubfolder(args.required("--sae").toStdString()).folder;
    try {
        run.sae = io::readSaeFolder(run.saeFolder, args.value("--hook").toStdString());
    } catch (const io::SaeFolderError& error) {
        throw CliError(std::string("--sae ") + error.what());
    }
    run.top = args.integer("--top", 5, 1, run.sae.config.dSae);
    run.modelFolder = io::resolveModel(args.model().toStdString()).folder;
    OpenedBackend opened = openChosenBackend(args);
    std::unique_ptr<TransformerModel> model;
    Tensor activations, target;
    runWithCpuFallback(opened, model, [&] {
        model = loadModel(run.modelFolder, *opened.backend);
        const ModelSpec& spec = model->spec();
        const io::SaeConfig& c = run.sae.config;
        const analysis::SaeHook hook = featuresHook(c.hookName, spec);
        checkHookWidth(c.hookName, featuresHookWidth(hook, spec), c.dIn);
        const std::unique_ptr<tokenize::Tokenizer> tokenizer = optionalTokenizer(run.modelFolder);
        run.input = cliTextInput(args, tokenizer.get());
        run.passMs = 0.0;
        activations = featuresActivations(*model, run, hook, c.hookName);
        if (!c.hookOutName.empty()) { // a transcoder: its target is at another hook
            const analysis::SaeHook out = featuresHook(c.hookOutName, spec);
            checkHookWidth(c.hookOutName, featuresHookWidth(out, spec), c.dIn);
            target = featuresActivations(*model, run, out, c.hookOutName);
        }
    });
    if (!opened.note.empty()) std::fprintf(stderr, "headlight features: %s\n", opened.note.c_str());
    run.backend = backendName(model->backend().kind());
    const auto start = std::chrono::steady_clock::now();
    run.encoding = analysis::encodeAndDecode(run.sae.sae, activations);
    run.encoding.target = target;
    run.encodeMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    run.quality = analysis::reconstructionQuality(run.encoding);
    if (args.has("--dump")) dumpFeatures(args.value("--dump"), run);
    if (args.has("--json"))
        QTextStream(stdout) << QJsonDocument(featuresJson(run)).toJson(QJsonDocument::Indented);
    else
        printFeatures(run);
    return 0;
}
} // namespace

CliCommand featuresCommand() {
    return {
        QStringLiteral("features"),
        QStringLiteral("encode a pass's activations with a published sparse autoencoder "
                       "(SAELens, Llama Scope, Gemma Scope): each token's top features"),
        {QStringLiteral("--model DIR --sae DIR [--hook NAME] (--text TEXT | --ids IDS) [--top K] "
                        "[--json] [--dump FILE] [--labels PATH] [--backend cpu|vulkan] "
                        "[--vulkan-device SEL]"),
         QStringLiteral("--model DIR --sae DIR --scan CORPUS --out FILE.json [--contexts K] "
                        "[--shard I/N] [--backend cpu|vulkan]")},
        {},
        {{"--model", "DIR",
          "the checkpoint folder, a zoo model's name, or a Hugging Face cache folder or cached "
          "ORG/NAME id, read offline"},
         revisionOption(),
         {"--sae", "DIR",
          "a SAELens SAE folder: cfg.json (6.x or the older flat layout) and "
          "sae_weights.safetensors, architectures standard, jumprelu, topk, gated; or a Llama "
          "Scope folder: hyperparams.json and checkpoints/final.safetensors; or ORG/NAME/FOLDER, "
          "that folder of a release in the Hugging Face cache, read offline; or a Gemma Scope "
          "folder: params.npz (Gemma Scope 1), or config.json and params.safetensors (Gemma "
          "Scope 2, SAEs and transcoders)"},
         {"--hook", "NAME",
          "the hook the SAE reads, where its folder does not say (a Gemma Scope 1 params.npz "
          "outside its release's path), e.g. blocks.12.hook_resid_post; refused when the folder "
          "names another"},
         {"--text", "TEXT", "the text to run, tokenized with the checkpoint's special tokens"},
         {"--ids", "IDS", "token ids to run as they are, separated by commas or spaces"},
         {"--top", "K", "features listed per token, strongest first, 1 to d_sae (default 5)"},
         {"--json", {}, "print the SAE, reconstruction quality and every token's features as JSON"},
         {"--dump", "FILE",
          "write feature_acts [T, d_sae], sae_in and sae_out [T, d_in] (f32) to a safetensors "
          "file"},
         {"--labels", "PATH",
          "a Neuronpedia export of this SAE's explanations read offline: a batch-N.jsonl.gz file "
          "or the folder holding them; each listed feature gets its description"},
         {"--scan", "CORPUS",
          "scan a corpus (one text per line) instead: each feature's strongest contexts and how "
          "often it fires, written to --out for the feature page (File > Open feature scan…)"},
         {"--out", "FILE", "with --scan: the scan file (JSON) to write"},
         {"--contexts", "K", "with --scan: contexts kept per feature, 1 to 1000 (default 10)"},
         {"--shard", "I/N",
          "with --scan: scan only shard I (from 0) of N of the corpus; `headlight merge` joins "
          "the N files into the scan of the whole corpus"},
         backendOption(),
         vulkanDeviceOption()},
        {QStringLiteral("headlight features --model tests/data/models/gpt2_plain --sae "
                        "tests/data/sae/gpt2_plain_topk_post2 --ids 5,17,42 --json"),
         QStringLiteral("headlight features --model ~/gpt2 --sae ~/saes/blocks.8.hook_resid_pre "
                        "--text \"The cat sat\" --top 10 --dump features.safetensors"),
         QStringLiteral("headlight features --model pre_ln --sae resources/saes/pre_ln --scan "
                        "resources/texts/jargon-heldout.txt --out scan.json")},
        &runFeatures,
    };
}
} // namespace headlight::app
