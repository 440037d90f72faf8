// `headlight figures realformer`: the RealFormer paper's attention figures (He et al. 2021,
// "RealFormer: Transformer Likes Residual Attention", Figs. 2 and 3) for the zoo's Post-LN,
// Pre-LN and RealFormer models, over a corpus of texts, with no display. Its options:
// figuresCommand() at the end, which `headlight figures --help` prints.
//
// For each model: MODEL-entropy.EXT (attention entropy per query token, one panel per layer,
// heads sorted by median, coloured by the paper's 1.5 / 4.5 nat bands) and MODEL-jsd.EXT (JSD
// between the same head in adjacent layers, 0.25 / 0.75 bit bands); then medians.csv (q1, median
// and q3 of every head of every model; a JSD row's layer l is the pair l → l+1) and, on stdout,
// each layer's mean head median. The zoo
// models were trained identically (docs/zoo.md), so the figures compare the architectures.
#include "cli.h"
#include "cli_args.h"
#include "cli_figures_effect.h"
#include "corpus_analysis.h"
#include "counted.h"
#include "default_model.h"
#include "export/figure_data.h"
#include "export_files.h"
#include "figure_builders.h"

#include <QDir>
#include <QFileInfo>
#include <QTextStream>
#include <cstdio>

namespace headlight::app {
namespace {

const QStringList kModels = {QStringLiteral("post_ln"), QStringLiteral("pre_ln"),
                             QStringLiteral("realformer")};

struct FiguresRequest {
    QStringList texts;
    QString corpusName;
    QDir out;
    QDir models;
    QStringList formats; // "pdf", "svg", "png"
    render::ExportOptions options;
};

QDir modelsFolder(const CliArgs& args) {
    if (args.has("--models")) return QDir(args.value("--models"));
    const std::optional<QString> resources = resourcesFolder();
    if (!resources)
        throw CliError("cannot find Headlight's resources folder with the zoo: give --models DIR "
                       "or set HEADLIGHT_RESOURCES");
    return QDir(*resources + QStringLiteral("/models"));
}

void checkModels(const QDir& models) {
    for (const QString& name : kModels)
        if (!QFileInfo(models.filePath(name + QStringLiteral("/config.json"))).isFile())
            throw CliError("the zoo model '" + name.toStdString() + "' is not in " +
                           models.absolutePath().toStdString() + " (no " + name.toStdString() +
                           "/config.json there)");
}

QStringList parseFormats(const CliArgs& args) {
    QStringList formats = args.values("--format");
    if (formats.isEmpty()) formats = {QStringLiteral("pdf"), QStringLiteral("png")};
    for (const QString& format : formats)
        if (format != QLatin1String("pdf") && format != QLatin1String("svg") &&
            format != QLatin1String("png"))
            throw CliError("--format must be pdf, svg or png; not '" + format.toStdString() + "'");
    formats.removeDuplicates();
    return formats;
}

QDir outputFolder(const QString& path) {
    QDir out(path);
    if (!out.exists() && !QDir().mkpath(path))
        throw CliError("cannot create the folder " + path.toStdString());
    if (!QFileInfo(out.absolutePath()).isWritable())
        throw CliError("cannot write into " + path.toStdString() + ": the folder is not writable");
    return out;
}

FiguresRequest parseRequest(const CliArgs& args) {
    FiguresRequest request;
    const QString corpus = args.required("--corpus");
    const QString out = args.required("--out");
    request.formats = parseFormats(args);
    request.models = modelsFolder(args);
    checkModels(request.models);
    try {
        request.texts = readCorpus(corpus);
    } catch (const std::runtime_error& error) {
        throw CliError("cannot read --corpus " + corpus.toStdString() + ": " + error.what());
    }
    if (request.texts.isEmpty())
        throw CliError("--corpus " + corpus.toStdString() + " holds no text (one text per line)");
    request.corpusName = QFileInfo(corpus).fileName();
    request.options.dpi =
        args.integer("--dpi", request.options.dpi, render::kMinDpi, render::kMaxDpi);
    request.out = outputFolder(out);
    return request;
}

void showProgress(const QString& model, std::size_t done, std::size_t total) {
    constexpr int kWidth = 30;
    const int filled = total ? int(kWidth * done / total) : kWidth;
    std::fprintf(stderr, "\rheadlight figures: %-10s [%s%s] %zu/%zu texts", qPrintable(model),
                 std::string(std::size_t(filled), '#').c_str(),
                 std::string(std::size_t(kWidth - filled), '.').c_str(), done, total);
    if (done == total) std::fputc('\n', stderr);
}

PooledCorpus runModel(const QString& name, const FiguresRequest& request, const CliArgs& args) {
    std::optional<BackendKind> forced;
    if (args.has("--backend")) forced = args.backend();
    const std::string selector = args.value("--vulkan-device").toStdString();
    const std::unique_ptr<LoadedModel> model =
        loadCheckpoint(request.models.filePath(name), chooseBackend(forced, selector), selector);
    const std::atomic<bool> never{false};
    PooledCorpus corpus = poolCorpus(
        *model, {}, request.texts,
        [&name](std::size_t done, std::size_t total) { showProgress(name, done, total); }, never);
    if (corpus.stats.texts == 0)
        throw CliError(name.toStdString() + " could analyse none of the texts; text 1: " +
                       corpus.pooled.errors.front().message);
    if (!corpus.pooled.errors.empty())
        std::fprintf(stderr, "headlight figures: %s left out %zu of %zu texts; text %zu: %s\n",
                     qPrintable(name), corpus.pooled.errors.size(), corpus.pooled.total,
                     corpus.pooled.errors.front().index + 1,
                     corpus.pooled.errors.front().message.c_str());
    return corpus;
}

void writeFigures(const QString& name, const PooledCorpus& corpus, const FiguresRequest& request) {
    ForwardResult result;
    result.tokens = corpus.firstLabels;
    ViewState unselected;
    unselected.layer = unselected.head = -1;
    render::ExportOptions options = request.options;
    options.caption = {
        name, QStringLiteral("as trained"),
        QStringLiteral("%1 from %2")
            .arg(counted(qint64(corpus.stats.texts), QStringLiteral("text")), request.corpusName)};
    for (const auto& [kind, file] : {std::pair{ViewKind::EntropyViolins, QStringLiteral("entropy")},
                                     std::pair{ViewKind::JsdViolins, QStringLiteral("jsd")}}) {
        render::Figure figure = buildFigure(kind, &result, unselected, &corpus.stats);
        if (auto* violins = std::get_if<render::ViolinFigure>(&figure))
            violins->title = name + QStringLiteral(": ") + violins->title;
        for (const QString& format : request.formats)
            exportToFile(request.out.filePath(name + "-" + file + "." + format), figure, options);
    }
}

void addMedianRows(render::DataTable& table, const QString& name, const QString& measure,
                   const ViolinSet& set, const CorpusStats& stats) {
    for (const analysis::Violin& v : set.violins) {
        const analysis::Summary& s = v.summary;
        table.rows.push_back({name, measure, QString::number(v.layer), QString::number(v.head),
                              QString::number(s.q1, 'g', 9), QString::number(s.median, 'g', 9),
                              QString::number(s.q3, 'g', 9), QString::number(s.count),
                              QString::number(stats.texts)});
    }
}

// "2.31 2.05 1.80": each layer's (or layer pair's) mean of its heads' medians.
QString layerMeans(const ViolinSet& set) {
    std::map<int64_t, std::pair<double, int>> byLayer;
    for (const analysis::Violin& v : set.violins) {
        byLayer[v.layer].first += v.summary.median;
        ++byLayer[v.layer].second;
    }
    QStringList means;
    for (const auto& [layer, sum] : byLayer)
        means << QString::number(sum.first / sum.second, 'f', 3);
    return means.join(' ');
}

int runFigures(const CliArgs& args) {
    if (args.operands().isEmpty())
        throw CliUsageError("give the figure set: realformer or variant-effect");
    if (args.operands().first() == QLatin1String("variant-effect"))
        return runVariantEffectFigures(args);
    if (args.operands().first() != QLatin1String("realformer"))
        throw CliUsageError("unknown figure set '" + args.operands().first().toStdString() +
                            "': the sets are realformer and variant-effect");
    const FiguresRequest request = parseRequest(args);
    render::DataTable medians;
    medians.header = {"model", "measure", "layer", "head", "q1", "median", "q3", "values", "texts"};
    QTextStream out(stdout);
    out << "layer means of the head medians: entropy (nats) | adjacent-layer JSD (bits)\n";
    for (const QString& name : kModels) {
        const PooledCorpus corpus = runModel(name, request, args);
        writeFigures(name, corpus, request);
        addMedianRows(medians, name, QStringLiteral("entropy"), corpus.stats.entropy, corpus.stats);
        addMedianRows(medians, name, QStringLiteral("jsd"), corpus.stats.jsd, corpus.stats);
        out << name.leftJustified(11) << layerMeans(corpus.stats.entropy) << " | "
            << layerMeans(corpus.stats.jsd) << "\n";
        out.flush();
    }
    render::writeCsv(request.out.filePath(QStringLiteral("medians.csv")), medians);
    out << "wrote " << request.formats.size() * kModels.size() * 2 + 1 << " files to "
        << request.out.absolutePath() << "\n";
    return 0;
}
} // namespace

CliCommand figuresCommand() {
    CliCommand command{
        QStringLiteral("figures"),
        QStringLiteral(
            "the RealFormer paper's entropy and JSD figures for the zoo's Post-LN, "
            "Pre-LN and RealFormer models over a corpus; what variants do to models' output"),
        {QStringLiteral("realformer --corpus FILE --out DIR [--models DIR] "
                        "[--format pdf|svg|png]... [--dpi N] [--backend cpu|vulkan] "
                        "[--vulkan-device SEL]"),
         QStringLiteral("variant-effect --corpus FILE --out DIR --models LIST --variants LIST "
                        "[--format pdf|svg|png]... [--dpi N] [--backend cpu|vulkan]")},
        {{QStringLiteral("realformer"),
          QStringLiteral("the figure set: He et al. 2021, Figs. 2 and 3")},
         {QStringLiteral("variant-effect"),
          QStringLiteral("mean KL, top-1 agreement and top-5 flips of each variant against exact "
                         "attention, per model (variant-effect.csv and a figure)")}},
        {{"--corpus", "FILE", "the texts, one per line"},
         {"--out", "DIR", "the folder to write into (made if missing)"},
         {"--models", "DIR|LIST",
          "realformer: the folder with post_ln, pre_ln and realformer (default: the zoo's); "
          "variant-effect: zoo model names or checkpoint folders, comma-separated or repeated"},
         {"--format", "pdf|svg|png", "a format to write, repeatable (default: pdf and png)"},
         dpiOption(),
         backendOption(),
         vulkanDeviceOption()},
        {QStringLiteral("headlight figures realformer --corpus resources/texts/jargon-heldout.txt "
                        "--out figures/"),
         QStringLiteral(
             "headlight figures variant-effect --corpus resources/texts/jargon-heldout.txt "
             "--models post_ln,pre_ln --variants window.json,alibi.json --out figures/")},
        &runFigures,
    };
    for (const CliOption& option : variantEffectOptions())
        command.options.push_back(option);
    return command;
}
} // namespace headlight::app
