// `headlight figures realformer`: the RealFormer paper's attention figures (He et al. 2021,
// "RealFormer: Transformer Likes Residual Attention", Figs. 2 and 3) for the zoo's Post-LN,
// Pre-LN and RealFormer models, over a corpus of texts, with no display. Its options:
// figuresCommand() at the end, which `headlight figures --help` prints.
//
// For each model: MODEL-entropy.EXT (attention entropy per query token, one panel per layer,
// heads sorted by median, coloured by the paper's 1.5 / 4.5 nat bands) and MODEL-jsd.EXT (JSD
// between the same head in adjacent layers, 0.25 / 0.75 bit bands); then medians.csv (q1, median
// and q3 of every head of every model; a JSD row's layer l is the pair l → l+1) and, on stdout,
// each layer's mean head median (figure_set_output.h). The zoo models were trained identically
// (docs/zoo.md), so the figures compare the architectures. With --shard i/n it analyses only the
// i-th of n slices of the corpus and writes the pooled values to a shard file instead
// (corpus_shard.h), which `headlight merge` turns into the same files (docs/scale.md).
#include "backend/backend_kind.h"
#include "build_info.h"
#include "cli.h"
#include "cli_args.h"
#include "corpus_shard.h"
#include "cli_figures_effect.h"
#include "corpus_analysis.h"
#include "counted.h"
#include "default_model.h"
#include "figure_set_output.h"
#include "file_hashes.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QTextStream>
#include <cstdio>
#include <optional>

namespace headlight::app {
namespace {

const QStringList kModels = {QStringLiteral("post_ln"), QStringLiteral("pre_ln"),
                             QStringLiteral("realformer")};

struct FiguresRequest {
    QStringList texts; // the whole corpus
    QString corpusName;
    QString corpusSha256;
    QDir models;
    std::optional<ShardPlace> shard; // --shard
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

FiguresRequest parseRequest(const CliArgs& args) {
    FiguresRequest request;
    const QString corpus = args.required("--corpus");
    args.required("--out");
    figureFormats(args);
    if (args.has("--shard")) try {
            request.shard = parseShardPlace(args.value("--shard"));
        } catch (const std::invalid_argument& error) {
            throw CliError(error.what());
        }
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
    request.corpusSha256 = fileSha256(corpus);
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

// Everything one model's pooling of (a shard of) the corpus gives, and its files' hashes.
// `ran` gets the backend and device that ran.
ShardModel runModel(const QString& name, const FiguresRequest& request, const CliArgs& args,
                    Provenance& ran) {
    std::optional<BackendKind> forced;
    if (args.has("--backend")) forced = args.backend();
    const std::string selector = args.value("--vulkan-device").toStdString();
    const QString folder = request.models.filePath(name);
    const std::unique_ptr<LoadedModel> model =
        loadCheckpoint(folder, chooseBackend(forced, selector), selector);
    ran.backend = QString::fromLatin1(backendName(model->backend->kind()));
    ran.device = QString::fromStdString(model->backend->deviceName());
    const auto [first, end] =
        shardTexts(request.shard.value_or(ShardPlace{}), std::size_t(request.texts.size()));
    const std::atomic<bool> never{false};
    ShardModel result;
    result.name = name;
    result.corpus = poolCorpus(
        *model, {}, request.texts.mid(qsizetype(first), qsizetype(end - first)),
        [&name](std::size_t done, std::size_t total) { showProgress(name, done, total); }, never,
        first);
    result.corpus.pooled.total = std::size_t(request.texts.size());
    const ModelFiles files = hashModelFiles(folder);
    for (const auto& [role, hashes] :
         {std::pair{"weights", &files.weights}, std::pair{"tokenizer", &files.tokenizer},
          std::pair{"config", &files.config}}) {
        QJsonObject json;
        for (const auto& [file, sha] : *hashes)
            json.insert(file, sha);
        result.files.insert(QLatin1String(role), json);
    }
    return result;
}

// What every shard of one run must share.
QJsonObject shardSettings(const FiguresRequest& request, const QString& backend) {
    const analysis::CorpusOptions sampling;
    return {{"figure_set", "realformer"},
            {"corpus_name", request.corpusName},
            {"corpus_sha256", request.corpusSha256},
            {"corpus_texts", qint64(request.texts.size())},
            {"variant", "as trained"},
            {"backend", backend},
            {"sample_cap", qint64(sampling.maxValuesPerHead)},
            {"sample_seed", QString::number(sampling.seed)}};
}

int writeShard(const FiguresRequest& request, const CliArgs& args) {
    const ShardPlace place = *request.shard;
    const QDir out = figureOutputFolder(args.value("--out"));
    CorpusShard shard{place, {}, {}, {}};
    Provenance ran;
    for (const QString& name : kModels)
        shard.models.push_back(runModel(name, request, args, ran));
    shard.settings = shardSettings(request, ran.backend);
    shard.made = {{"version", headlightVersion()},
                  {"device", ran.device},
                  {"corpus", QFileInfo(args.value("--corpus")).absoluteFilePath()},
                  {"models", request.models.absolutePath()},
                  {"revision", buildRevision()},
                  {"command", QJsonArray::fromStringList(QCoreApplication::arguments().mid(1))}};
    const QString path = out.filePath(QStringLiteral("realformer-shard-%1-of-%2.safetensors")
                                          .arg(place.index, 4, 10, QLatin1Char('0'))
                                          .arg(place.count, 4, 10, QLatin1Char('0')));
    try {
        writeCorpusShard(path, shard);
    } catch (const CorpusShardError& error) {
        throw CliError(error.what());
    }
    const auto [first, end] = shardTexts(place, std::size_t(request.texts.size()));
    QTextStream(stdout) << "wrote shard " << place.index << "/" << place.count << " (texts "
                        << first + 1 << " to " << end << " of " << request.texts.size() << ") to "
                        << QFileInfo(path).absoluteFilePath() << "\n";
    return 0;
}

// What every file of a run over the whole corpus carries, less the backend that ran, the command
// that pins it and each figure's own fields.
Provenance runProvenance(const FiguresRequest& request, const CliArgs& args) {
    Provenance provenance;
    provenance.modelName = kModels.join(QStringLiteral(", "));
    provenance.modelFolder = request.models.absolutePath();
    provenance.files = figureSetFiles(request.models, kModels);
    provenance.scenario.model = provenance.modelFolder.toStdString();
    provenance.scenario.view = "entropy-violins";
    provenance.corpus =
        CorpusFile{QFileInfo(args.value("--corpus")).absoluteFilePath(), request.corpusSha256};
    provenance.version = headlightVersion();
    provenance.revision = buildRevision();
    return provenance;
}

// `headlight figures ...` with absolute paths and the backend that ran, which regenerates the run.
QStringList regenerationCommand(const FiguresRequest& request, const CliArgs& args,
                                const FigureSetOutput& output) {
    QStringList command = {QStringLiteral("figures"),  QStringLiteral("realformer"),
                           QStringLiteral("--corpus"), output.provenance.corpus->path,
                           QStringLiteral("--out"),    output.out.absolutePath(),
                           QStringLiteral("--models"), request.models.absolutePath()};
    for (const QString& format : output.formats)
        command << QStringLiteral("--format") << format;
    command << QStringLiteral("--dpi") << QString::number(output.options.dpi)
            << QStringLiteral("--backend") << output.provenance.backend;
    if (args.has("--vulkan-device"))
        command << QStringLiteral("--vulkan-device") << args.value("--vulkan-device");
    return command;
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
    if (request.shard) return writeShard(request, args);
    FigureSetOutput output = startFigureSet(QStringLiteral("figures"), args, request.corpusName,
                                            runProvenance(request, args));
    for (const QString& name : kModels) {
        const ShardModel model = runModel(name, request, args, output.provenance);
        output.provenance.command = regenerationCommand(request, args, output);
        reportLeftOut(output.command, name, model.corpus);
        writeModelFigures(output, name, model.corpus);
        QTextStream(stdout).flush();
    }
    finishFigureSet(output, std::size_t(kModels.size()));
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
         QStringLiteral("realformer --corpus FILE --shard I/N --out DIR [--models DIR] "
                        "[--backend cpu|vulkan] [--vulkan-device SEL]"),
         QStringLiteral("variant-effect --corpus FILE --out DIR --models LIST --variants LIST "
                        "[--format pdf|svg|png]... [--dpi N] [--backend cpu|vulkan]")},
        {{QStringLiteral("realformer"),
          QStringLiteral("the figure set: He et al. 2021, Figs. 2 and 3")},
         {QStringLiteral("variant-effect"),
          QStringLiteral("mean KL, top-1 agreement and top-5 flips of each variant against exact "
                         "attention, per model (variant-effect.csv and a figure)")}},
        {{"--corpus", "FILE", "the texts, one per line"},
         {"--out", "DIR", "the folder to write into (made if missing)"},
         {"--shard", "I/N",
          "analyse only slice I of N of the corpus (I from 0) into a shard file for "
          "`headlight merge`"},
         {"--models", "DIR|LIST",
          "realformer: the folder with post_ln, pre_ln and realformer (default: the zoo's); "
          "variant-effect: zoo model names or checkpoint folders, comma-separated or repeated"},
         {"--format", "pdf|svg|png", "a format to write, repeatable (default: pdf and png)"},
         dpiOption(),
         backendOption(),
         vulkanDeviceOption()},
        {QStringLiteral("headlight figures realformer --corpus resources/texts/jargon-heldout.txt "
                        "--out figures/"),
         QStringLiteral("headlight figures realformer --corpus texts.txt --shard 3/16 "
                        "--out shards/"),
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
