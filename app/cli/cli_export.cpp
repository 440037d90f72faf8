// `headlight export`: one view of a forward pass as PNG, SVG or PDF, or its numbers as CSV or
// safetensors, painted by the same code as the window and with no display: the command runs on
// Qt's offscreen platform unless QT_QPA_PLATFORM names another (app/cli.cpp).
// Its options: exportCommand() at the end, which `headlight export --help` prints.
//
// --texts FILE takes one text per line (blank lines skipped) and pools the violins' per-token
// values over all of them (core/analysis/corpus.h), with a progress line on stderr. Without
// --layer or --head nothing is outlined as selected: a paper's figure has no cursor in it.
// Arguments are checked before the model loads, so a typo costs no forward pass.
#include "analysis/corpus.h"
#include "analysis/divergence.h"
#include "attention_stats.h"
#include "cli.h"
#include "cli_args.h"
#include "cli_atlas.h"
#include "cli_export_checkpoints.h"
#include "cli_interrupt.h"
#include "corpus_analysis.h"
#include "counted.h"
#include "export_files.h"
#include "feature_labels.h"
#include "feature_scan.h"
#include "figure_builders.h"
#include "knn_figure.h"
#include "model_session.h"
#include "provenance.h"
#include "scene_files.h"
#include "scene_render.h"
#include "text_input.h"
#include "variants/variant_spec.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QTextStream>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace headlight::app {
namespace {

// What the arguments ask for, checked before the model loads.
struct Request {
    io::Scenario scenario; // the model's portable name, the (first) text, variant JSON, view, …
    QString folder;        // --model as given: it loads the model and names it in messages
    ViewKind view = ViewKind::Heatmap;
    QString out;
    render::ExportOptions options;
    variants::VariantSpec variant; // the scenario's, as the engine runs it
    QStringList texts;
    bool corpus = false;                    // --texts
    double knnLambda = -1.0;                // --lambda; negative: the variant's own
    std::shared_ptr<const AttachedSae> sae; // --sae, read before the model loads
};

const QString kAtlasView = QStringLiteral("atlas");

int listViews() {
    QTextStream out(stdout);
    for (int i = 0; i < kAllViewCount; ++i) {
        const auto kind = ViewKind(i);
        out << viewId(kind).leftJustified(18) << viewSummary(kind) << "\n";
    }
    out << kAtlasView.leftJustified(18)
        << "one head or layer at any length, pooled into tiles (--region, --pool); no window view "
           "yet\n";
    return 0;
}

ViewKind parseView(const QString& name) {
    for (int i = 0; i < kAllViewCount; ++i)
        if (viewId(ViewKind(i)) == name) return ViewKind(i);
    throw CliError("unknown view '" + name.toStdString() +
                   "': 'headlight export --list-views' names them");
}

// --lambda: the kNN-LM view's re-mix weight, in [0, 1].
double parseLambda(const QString& text) {
    bool ok = false;
    const double lambda = text.toDouble(&ok);
    if (!ok || !(lambda >= 0.0 && lambda <= 1.0))
        throw CliError("--lambda must be a number from 0 to 1, not '" + text.toStdString() + "'");
    return lambda;
}

// The features view reads an SAE; --sae and --feature are for it alone.
void checkFeaturesRequest(const CliArgs& args, Request& request) {
    const bool featuresView = request.view == ViewKind::Features;
    for (const char* flag : {"--sae", "--feature", "--scan", "--labels"})
        if (args.has(flag) && !featuresView)
            throw CliError(std::string(flag) + " is for --view features");
    if (!featuresView) return;
    if (!args.has("--sae"))
        throw CliError("--view features needs --sae DIR: the sparse autoencoder to read");
    request.scenario.sae = args.value("--sae").toStdString();
    try {
        request.sae = attachSae(args.value("--sae"));
    } catch (const std::exception& refused) {
        throw CliError(std::string("--sae ") + refused.what());
    }
    request.scenario.selection.feature =
        args.integer("--feature", -1, 0, request.sae->sae.config.dSae - 1);
    std::shared_ptr<const FeatureScan> scan;
    std::shared_ptr<const FeatureLabels> labels;
    try {
        if (args.has("--scan"))
            scan = std::make_shared<const FeatureScan>(readFeatureScan(args.value("--scan")));
        request.sae = withFeatureNotes(request.sae, scan, nullptr);
    } catch (const std::exception& refused) {
        throw CliError(std::string("--scan ") + refused.what());
    }
    try {
        if (args.has("--labels"))
            labels =
                std::make_shared<const FeatureLabels>(readFeatureLabels(args.value("--labels")));
        request.sae = withFeatureNotes(request.sae, nullptr, labels);
    } catch (const FeatureLabelsError& refused) {
        throw CliError(std::string("--labels ") + refused.what());
    }
}

// The kNN-LM view reads a kNN-LM pass; --lambda is for it alone.
void checkKnnRequest(const CliArgs& args, Request& request) {
    const bool knnView = request.view == ViewKind::KnnNeighbours;
    if (args.has("--lambda") && !knnView) throw CliError("--lambda is for --view knn-neighbours");
    if (!knnView) return;
    if (!request.variant.knn)
        throw CliError("--view knn-neighbours needs a kNN-LM variant: give --variant SPEC.json "
                       "with a \"knn\" section (docs/variants.md, item 18)");
    if (args.has("--lambda")) request.knnLambda = parseLambda(args.value("--lambda"));
}

bool isViolins(ViewKind view) {
    return view == ViewKind::EntropyViolins || view == ViewKind::JsdViolins;
}

QSizeF parseSize(const QString& text) {
    const QStringList parts = text.toLower().split(QLatin1Char('x'));
    bool okW = false, okH = false;
    const double w = parts.size() == 2 ? parts[0].toDouble(&okW) : 0.0;
    const double h = parts.size() == 2 ? parts[1].toDouble(&okH) : 0.0;
    if (!okW || !okH || !(w >= 1.0 && w <= 100.0 && h >= 1.0 && h <= 100.0))
        throw CliError(
            "--size must be WIDTHxHEIGHT in inches, each from 1 to 100, e.g. 7x4.5; not '" +
            text.toStdString() + "'");
    return {w, h};
}

QStringList readTexts(const QString& path) {
    QStringList texts;
    try {
        texts = readCorpus(path);
    } catch (const std::runtime_error& error) {
        throw CliError("cannot read --texts " + path.toStdString() + ": " + error.what());
    }
    if (texts.isEmpty())
        throw CliError("--texts " + path.toStdString() + " holds no text (one text per line)");
    return texts;
}

void checkOut(const QString& out) {
    const std::optional<ExportFormat> format = exportFormatFor(out);
    const QString suffix = QFileInfo(out).suffix();
    if (!format)
        throw CliError((suffix.isEmpty()
                            ? QStringLiteral("--out has no extension")
                            : QStringLiteral("--out: unknown extension '.%1'").arg(suffix))
                           .toStdString() +
                       ": use " + exportExtensions().toStdString());
    const QFileInfo folder(QFileInfo(out).absolutePath());
    if (!folder.isDir())
        throw CliError("cannot write " + out.toStdString() + ": the folder " +
                       folder.filePath().toStdString() + " does not exist");
    if (!folder.isWritable())
        throw CliError("cannot write " + out.toStdString() + ": the folder " +
                       folder.filePath().toStdString() + " is not writable");
}

Request parseRequest(const CliArgs& args) {
    Request request;
    request.folder = args.model();
    request.scenario.model = sceneModelName(request.folder);
    request.view = parseView(args.required("--view"));
    request.scenario.view = viewId(request.view).toStdString();
    request.out = args.required("--out");
    checkOut(request.out);
    for (const char* flag : {"--region", "--pool", "--overlay"})
        if (args.has(flag)) throw CliError(std::string(flag) + " is for --view atlas");
    for (const char* flag : {"--revision-filter", "--frame-ms"})
        if (args.has(flag)) throw CliError(std::string(flag) + " is for --checkpoints");
    if (int(args.has("--text")) + int(args.has("--texts")) + int(args.has("--text-file")) != 1)
        throw CliError("give exactly one of --text, --text-file and --texts");
    request.corpus = args.has("--texts");
    if (request.corpus && !isViolins(request.view))
        throw CliError("--texts pools a corpus for entropy-violins and jsd-violins only; give "
                       "--text for " +
                       viewId(request.view).toStdString());
    request.texts =
        request.corpus ? readTexts(args.value("--texts")) : QStringList{exportText(args)};
    request.scenario.text = request.texts.front().toStdString();
    request.options.dpi =
        args.integer("--dpi", request.options.dpi, render::kMinDpi, render::kMaxDpi);
    if (args.has("--size")) request.options.inches = parseSize(args.value("--size"));
    if (args.has("--variant")) {
        VariantFile variant = loadVariantFile(args.value("--variant"));
        request.variant = std::move(variant.spec);
        request.scenario.variant = variant.json;
        request.options.caption.variant = QFileInfo(args.value("--variant")).completeBaseName();
    } else {
        request.options.caption.variant = QStringLiteral("vanilla");
    }
    // In range of the model once it has loaded (checkSelection).
    request.scenario.selection.layer = args.integer("--layer", 0, 0, 1 << 30);
    request.scenario.selection.head = args.integer("--head", 0, 0, 1 << 30);
    if (args.has("--backend")) request.scenario.backend = args.backend();
    checkKnnRequest(args, request);
    checkFeaturesRequest(args, request);
    return request;
}

std::unique_ptr<LoadedModel> openModel(const Request& request, const CliArgs& args) {
    const std::string selector = args.value("--vulkan-device").toStdString();
    return loadCheckpoint(request.folder, chooseBackend(request.scenario.backend, selector),
                          selector);
}

// The pass the window would show for the text, internals included (and, for the sparsity
// view, the vanilla pass beside the variant's; for the LM-head views, the output analysis).
std::shared_ptr<ForwardResult> runText(std::shared_ptr<const LoadedModel> loaded,
                                       const Request& request) {
    const int64_t tokens =
        int64_t(prepareText(loaded->tokenizer.get(), request.texts.front()).input.ids.size());
    const PassControl control = interruptiblePass("headlight export", tokens);
    auto result = runForwardPass(
        loaded, request.texts.front(), request.variant,
        {.extras = viewRow(request.view).needs, .sae = request.sae, .control = control});
    if (!result->error.isEmpty()) throw CliError(result->error.toStdString());
    if (result->tokenCount() == 0) throw CliError("the text produced no tokens");
    return result;
}

void reportCorpusErrors(const analysis::CorpusResult& pooled) {
    if (pooled.errors.empty()) return;
    const analysis::CorpusError& first = pooled.errors.front();
    if (pooled.accumulated.textCount() == 0)
        throw CliError("no text could be analysed; text " + std::to_string(first.index + 1) + ": " +
                       first.message);
    std::fprintf(stderr,
                 "headlight export: %zu of %zu texts failed and were left out; text %zu: %s\n",
                 pooled.errors.size(), pooled.total, first.index + 1, first.message.c_str());
}

// The violins of a corpus: per-token values pooled over every text. The other fields of the
// result stay empty; buildFigure draws only results with tokens, so it gets the first text's.
std::shared_ptr<ForwardResult> runCorpus(const LoadedModel& loaded, const Request& request) {
    const auto progress = [](std::size_t done, std::size_t total) {
        std::fprintf(stderr, "\rheadlight export: %zu/%zu texts", done, total);
        if (done == total) std::fputc('\n', stderr);
    };
    const std::atomic<bool> never{false};
    const PooledCorpus corpus = poolCorpus(loaded, request.variant, request.texts, progress, never);
    reportCorpusErrors(corpus.pooled);
    auto result = std::make_shared<ForwardResult>();
    result->tokens = corpus.firstLabels;
    result->stats.entropy = corpus.stats.entropy;
    result->stats.jsd = corpus.stats.jsd;
    return result;
}

// The scenario's layer and head, refused when the model has fewer.
void checkSelection(const io::ScenarioSelection& selection, const ModelSpec& spec) {
    const auto check = [](const char* flag, int value, int count, const char* what) {
        if (value >= count)
            throw CliError(std::string(flag) + " " + std::to_string(value) +
                           " is out of range: the model has " + std::to_string(count) + " " + what +
                           " (0 to " + std::to_string(count - 1) + ")");
    };
    check("--layer", selection.layer, spec.layers, "layers");
    check("--head", selection.head, spec.heads, "heads");
}

// A figure for a page, not a screen: no head outlined as the cursor's.
void clearSelection(render::Figure& figure) {
    if (auto* grid = std::get_if<render::ModelGridFigure>(&figure))
        grid->selectedLayer = grid->selectedHead = -1;
    if (auto* violins = std::get_if<render::ViolinFigure>(&figure))
        violins->selectedLayer = violins->selectedHead = -1;
    if (auto* heatmap = std::get_if<render::HeatmapFigure>(&figure)) heatmap->emphasisedRow = -1;
}

// The figure, and the pass it was drawn from in `ran`.
render::PageContent buildExportFigure(const CliArgs& args, const Request& request,
                                      const std::shared_ptr<const LoadedModel>& loaded,
                                      std::shared_ptr<const ForwardResult>& ran) {
    checkSelection(request.scenario.selection, loaded->model->spec());
    const auto result = request.corpus ? runCorpus(*loaded, request) : runText(loaded, request);
    ran = result;
    ViewState state = scenarioViewState(request.scenario, result->tokenCount());
    state.knnLambda = request.knnLambda;
    if (isPanelView(request.view)) {
        render::PanelsFigure panels = buildPanels(request.view, result.get(), state);
        const auto isNote = [](const render::Panel& p) {
            return std::holds_alternative<render::NotePanel>(p);
        };
        if (std::all_of(panels.panels.begin(), panels.panels.end(), isNote))
            throw CliError("nothing to export: " +
                           (panels.panels.empty()
                                ? viewId(request.view)
                                : std::get<render::NotePanel>(panels.panels.front()).message)
                               .toStdString());
        return panels;
    }
    render::Figure figure = buildFigure(request.view, result.get(), state);
    if (const auto* empty = std::get_if<render::EmptyFigure>(&figure))
        throw CliError("nothing to export: " + empty->message.toStdString());
    if (!args.has("--layer") && !args.has("--head")) clearSelection(figure);
    if (auto* violins = std::get_if<render::ViolinFigure>(&figure); violins && request.corpus)
        violins->title +=
            QStringLiteral(", over %1").arg(counted(request.texts.size(), QStringLiteral("text")));
    return figure;
}

render::FigureCaption captionFor(const Request& request, const ModelSpec& spec,
                                 const CliArgs& args) {
    render::FigureCaption caption = request.options.caption;
    caption.model = QStringLiteral("%1 (%2, %3 × %4)")
                        .arg(QFileInfo(QDir::cleanPath(request.folder)).fileName(),
                             QString::fromLatin1(architectureName(spec.architecture)),
                             counted(spec.layers, QStringLiteral("layer")),
                             counted(spec.heads, QStringLiteral("head")));
    caption.text = request.corpus ? QStringLiteral("%1 from %2")
                                        .arg(counted(request.texts.size(), QStringLiteral("text")),
                                             QFileInfo(args.value("--texts")).fileName())
                                  : QString::fromStdString(request.scenario.text);
    return caption;
}

// A saved scene (docs/scenes.md) names the model, text, variant, view and selection itself;
// --backend, when given, overrides the scene's backend.
void refuseScenarioFlags(const CliArgs& args) {
    const char* given = args.has("--scene") ? "--scene" : "--scenario";
    for (const char* flag : {"--model", "--revision", "--text", "--text-file", "--texts",
                             "--variant", "--view", "--layer", "--head", "--region", "--pool",
                             "--scene", "--sae", "--feature", "--scan", "--labels"})
        if (args.has(flag) && std::strcmp(flag, given) != 0)
            throw CliError(std::string(given) +
                           " gives the model, text, variant, view and selection: leave out " +
                           flag);
}

// --scene's file, or --scenario's JSON (whose relative model folder starts here).
io::Scene sceneOf(const CliArgs& args) {
    refuseScenarioFlags(args);
    io::Scene scene = args.has("--scene") ? loadScene(args.value("--scene"))
                                          : io::parseScene(args.value("--scenario").toStdString(),
                                                           sceneVocabulary());
    if (args.has("--backend")) scene.backend = args.backend();
    return scene;
}

QString sceneFolder(const CliArgs& args) {
    return args.has("--scene") ? QFileInfo(args.value("--scene")).absolutePath()
                               : QDir::currentPath();
}

// The command that regenerates this export: the options given, in the order the command declares
// them, with the files it reads named by absolute paths so that it runs from any folder, and the
// file it writes by its name (in the folder the command runs in), so that a reproduction written
// under the same name elsewhere records the same command.
QStringList regenerationCommand(const CliArgs& args) {
    static const QStringList files{"--model", "--texts",       "--text-file", "--variant",
                                   "--scene", "--checkpoints", "--sae"};
    QStringList command{QStringLiteral("export")};
    for (const CliOption& option : exportCommand().options) {
        if (!args.has(option.flag)) continue;
        command << option.flag;
        if (!option.takesValue()) continue;
        const QString value = args.value(option.flag);
        if (option.flag == QLatin1String("--out"))
            command << QFileInfo(value).fileName();
        else if (files.contains(option.flag) && QFileInfo::exists(value))
            command << QFileInfo(value).absoluteFilePath();
        else
            command << value;
    }
    return command;
}

render::ExportOptions pageOptions(const CliArgs& args) {
    render::ExportOptions options;
    options.dpi = args.integer("--dpi", options.dpi, render::kMinDpi, render::kMaxDpi);
    if (args.has("--size")) options.inches = parseSize(args.value("--size"));
    return options;
}

QString provenanceJson(Provenance provenance, const CliArgs& args) {
    provenance.command = regenerationCommand(args);
    if (args.has("--texts")) {
        const QString corpus = QFileInfo(args.value("--texts")).absoluteFilePath();
        provenance.corpus = CorpusFile{corpus, fileSha256(corpus)};
    }
    return QString::fromUtf8(
        QJsonDocument(provenanceToJson(provenance)).toJson(QJsonDocument::Compact));
}

int exportScene(const CliArgs& args) {
    refuseScenarioFlags(args);
    const QString out = args.required("--out");
    checkOut(out);
    render::ExportOptions options = pageOptions(args);
    const io::Scene scene = sceneOf(args);
    const RenderedScene rendered =
        renderScenario(scene, sceneFolder(args), args.value("--vulkan-device").toStdString());
    options.caption = rendered.caption;
    options.provenance =
        provenanceJson(describeExport(*rendered.model, scene, rendered.content), args);
    exportToFile(out, rendered.content, options);
    return 0;
}

int runExport(const CliArgs& args) {
    if (args.has("--list-views")) return listViews();
    if (args.has("--checkpoints")) return runCheckpointExport(args, regenerationCommand(args));
    if (args.has("--scene") || args.has("--scenario")) return exportScene(args);
    if (args.value("--view") == kAtlasView) {
        checkOut(args.required("--out"));
        return runAtlasExport(args, pageOptions(args), regenerationCommand(args));
    }
    Request request = parseRequest(args);
    const std::shared_ptr<const LoadedModel> loaded = openModel(request, args);
    if (!loaded->backendNote.isEmpty())
        std::fprintf(stderr, "headlight export: %s\n", qPrintable(loaded->backendNote));
    std::shared_ptr<const ForwardResult> result;
    const render::PageContent figure = buildExportFigure(args, request, loaded, result);
    request.options.caption = captionFor(request, loaded->model->spec(), args);
    request.options.provenance =
        provenanceJson(describeExport(*loaded, request.scenario, figure), args);
    // Why a table of its own: the neighbours' text and ranks are not cells of the figure's panels.
    if (request.view == ViewKind::KnnNeighbours &&
        exportFormatFor(request.out) == ExportFormat::Csv)
        exportTable(request.out, knnNeighbourTable(*result, request.knnLambda), request.options);
    else
        exportToFile(request.out, figure, request.options);
    return 0;
}
} // namespace

io::Scenario exportScenario(const QStringList& rawArgs) {
    const CliArgs args(rawArgs, exportCommand());
    if (args.value("--view") == QLatin1String("atlas")) return atlasExportScenario(args);
    return args.has("--scene") || args.has("--scenario") ? sceneOf(args)
                                                         : parseRequest(args).scenario;
}

CliCommand exportCommand() {
    return {
        QStringLiteral("export"),
        QStringLiteral("render a view to PNG, SVG or PDF (or its data to CSV or safetensors), no "
                       "display needed"),
        {QStringLiteral(
             "--model DIR (--text STR | --text-file FILE | --texts FILE) --view NAME --out FILE "
             "[--variant SPEC.json] [--layer L] [--head H] [--lambda X] [--sae DIR [--feature F]] "
             "[--dpi N] [--size WxH] [--backend cpu|vulkan] [--vulkan-device SEL]"),
         QStringLiteral("--scene SCENE.json --out FILE [--dpi N] [--size WxH] "
                        "[--backend cpu|vulkan] [--vulkan-device SEL]"),
         QStringLiteral("--scenario JSON --out FILE [--dpi N] [--size WxH] "
                        "[--backend cpu|vulkan] [--vulkan-device SEL]"),
         QStringLiteral(
             "--checkpoints SOURCE [--revision-filter REGEX] [--text STR | --text-file "
             "FILE] --view NAME --out DIR|FILE.png [--frame-ms N] [--layer L] [--head H] "
             "[--dpi N] [--backend cpu|vulkan]"),
         QStringLiteral("--checkpoints SOURCE [--revision-filter REGEX] [--text STR | --text-file "
                        "FILE] --view training --out FILE [--dpi N] [--backend cpu|vulkan]"),
         QStringLiteral("--list-views")},
        {},
        {{"--list-views", {}, "list the views with one line each, and exit"},
         {"--model", "DIR",
          "the checkpoint folder (Hugging Face safetensors or the zoo's format), or a Hugging Face "
          "cache folder or cached ORG/NAME id, read offline"},
         revisionOption(),
         {"--text", "STR", "the text to run"},
         {"--text-file", "FILE", "the text to run, read whole from a UTF-8 file (long inputs)"},
         {"--texts", "FILE",
          "a corpus, one text per line: entropy-violins and jsd-violins pool every text"},
         {"--variant", "SPEC.json", "run these X-former options (docs/variants.md)"},
         {"--view", "NAME", "the view to draw (--list-views names them)"},
         {"--layer", "L",
          "the layer to select (default 0; unless --layer or --head is given, none is outlined)"},
         {"--head", "H",
          "the head to select (default 0); the atlas also takes 'mean' (the layer's mean)"},
         {"--region", "Q0:Q1,K0:K1",
          "atlas: the part of the map to draw, in token positions, end excluded (default all)"},
         {"--pool", "mean|max", "atlas: how a tile pools the weights it covers (default mean)"},
         {"--overlay", "mask",
          "atlas: outline the mask the map obeys (the variant's pattern, or the model's causal "
          "rule) and give the attention outside it"},
         {"--lambda", "X",
          "knn-neighbours: re-mix p_kNN and p_LM with this weight, 0 to 1, without another pass "
          "(default: the variant's lambda)"},
         {"--sae", "DIR",
          "features: the sparse autoencoder to read (a folder as `headlight features --sae` "
          "takes it, or ORG/NAME/FOLDER of the Hugging Face cache)"},
         {"--feature", "F",
          "features: draw feature F's page (its activation, histogram and promoted tokens) "
          "instead of every token's strongest features"},
         {"--scan", "FILE",
          "features: a scan of `headlight features --scan` for this SAE; the page adds the "
          "feature's top contexts over its corpus and how often it fires there"},
         {"--labels", "PATH",
          "features: a Neuronpedia export of this SAE's explanations (batch-N.jsonl.gz or its "
          "folder), read offline; features are shown with their descriptions"},
         dpiOption(),
         {"--size", "WxH", "the figure's size in inches, each from 1 to 100, e.g. 7x4.5"},
         backendOption(),
         vulkanDeviceOption(),
         {"--out", "FILE",
          "where to write: .png, .svg, .pdf (the figure) or .csv, .safetensors (its numbers)"},
         {"--scene", "SCENE.json",
          "draw a saved scene (docs/scenes.md), which names the model, text, variant, view and "
          "selection"},
         {"--scenario", "JSON",
          "draw a scene given inline as JSON, as the window's exports record it (docs/export.md)"},
         {"--checkpoints", "SOURCE",
          "every checkpoint of a training series (docs/scrubber.md): a run folder, a run's name "
          "in resources/runs, or a Hugging Face cache id with several revisions; --out DIR gets "
          "the view as frame_0000.png, ..., --out FILE.png (or .apng) one animated PNG, and "
          "--view training the lines over training"},
         {"--frame-ms", "N",
          "with --checkpoints and an animated --out: how long each checkpoint is shown, 1 to "
          "65535 ms (default 600)"},
         {"--revision-filter", "REGEX",
          "with --checkpoints: only the checkpoints whose label (step 200, step1000) matches"}},
        {QStringLiteral("headlight export --model resources/models/realformer --text 'The cat "
                        "sat on the mat.' --view entropy-violins --out violins.pdf"),
         QStringLiteral(
             "headlight export --model resources/models/rope --text-file book.txt "
             "--view atlas --layer 1 --head mean --region 0:4096,0:4096 --out atlas.pdf"),
         QStringLiteral("headlight export --checkpoints EleutherAI/pythia-70m --revision-filter "
                        "'^step[0-9]*000$' --text 'a b c a b c' --view training --out lines.csv"),
         QStringLiteral(
             "headlight export --checkpoints induction --view heatmap --layer 1 --head 0 "
             "--out induction.png")},
        &runExport,
    };
}
} // namespace headlight::app
