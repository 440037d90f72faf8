// `headlight figures variant-effect --corpus FILE --models A,B --variants X.json,Y.json --out DIR`:
// for every model and variant, the variant against exact attention over the corpus at the LM
// head: mean KL(p_exact ‖ p_variant) per position, top-1 agreement and top-5 flips, pooled over
// every valid position (app/session/output_corpus.h). Writes variant-effect.csv (one row per
// model and variant, with the first refusal where a model cannot run a variant) and
// variant-effect.EXT (models × variants, mean KL and top-1 agreement), with progress on stderr.
#include "cli_figures_effect.h"

#include "cli.h"
#include "corpus_analysis.h"
#include "counted.h"
#include "default_model.h"
#include "export/figure_data.h"
#include "export_files.h"
#include "output_corpus.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTextStream>
#include <cstdio>

namespace headlight::app {
namespace {

struct EffectRequest {
    QStringList texts, models, formats;
    QString corpusName;
    std::vector<NamedVariant> variants;
    QDir out;
    render::ExportOptions options;
};

// Repeatable options that also take comma-separated lists.
QStringList listOption(const CliArgs& args, const char* flag) {
    QStringList items;
    for (const QString& value : args.values(flag))
        for (const QString& item : value.split(QLatin1Char(','), Qt::SkipEmptyParts))
            items << item.trimmed();
    if (items.isEmpty()) throw CliUsageError(std::string("variant-effect needs ") + flag);
    return items;
}

// A zoo model's name, or a checkpoint folder.
QString modelSource(const QString& model) {
    if (QFileInfo(model).isDir()) return model;
    const std::optional<QString> resources = resourcesFolder();
    const QString zoo = resources ? *resources + QStringLiteral("/models/") + model : QString();
    if (!zoo.isEmpty() && QFileInfo(zoo).isDir()) return zoo;
    throw CliError("--models: '" + model.toStdString() +
                   "' is neither a checkpoint folder nor a zoo model");
}

NamedVariant readVariantFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw CliError("cannot read --variants " + path.toStdString() + ": " +
                       file.errorString().toStdString());
    try {
        return {QFileInfo(path).completeBaseName(),
                variants::parseVariantSpec(file.readAll().toStdString())};
    } catch (const std::exception& error) {
        throw CliError(path.toStdString() + ": " + error.what());
    }
}

EffectRequest parseEffectRequest(const CliArgs& args) {
    EffectRequest request;
    const QString corpus = args.required("--corpus");
    const QString out = args.required("--out");
    request.models = listOption(args, "--models");
    for (const QString& path : listOption(args, "--variants"))
        request.variants.push_back(readVariantFile(path));
    request.formats = args.values("--format");
    if (request.formats.isEmpty()) request.formats = {QStringLiteral("pdf"), QStringLiteral("png")};
    for (const QString& format : request.formats)
        if (format != QLatin1String("pdf") && format != QLatin1String("svg") &&
            format != QLatin1String("png"))
            throw CliError("--format must be pdf, svg or png; not '" + format.toStdString() + "'");
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
    request.out = QDir(out);
    if (!request.out.exists() && !QDir().mkpath(out))
        throw CliError("cannot create the folder " + out.toStdString());
    return request;
}

void showEffectProgress(const QString& model, std::size_t done, std::size_t total) {
    std::fprintf(stderr, "\rheadlight figures: %s %zu/%zu texts", qPrintable(model), done, total);
    if (done == total) std::fputc('\n', stderr);
}

render::HeatmapFigure effectGrid(const EffectRequest& request,
                                 const std::vector<std::vector<EffectRow>>& rows, bool agreement) {
    render::HeatmapFigure f;
    f.rows = int(request.models.size());
    f.cols = int(request.variants.size());
    f.rowLabels = request.models;
    for (const NamedVariant& v : request.variants)
        f.colLabels << v.name;
    float high = 1e-3f;
    for (const auto& modelRows : rows)
        for (const EffectRow& row : modelRows) {
            const bool ran = row.positions > 0;
            f.values.push_back(ran ? float(agreement ? row.top1Agreement : row.meanKl) : 0.0f);
            f.absent.push_back(!ran);
            high = std::max(high, f.values.back());
        }
    f.rowAxis = QStringLiteral("Model");
    f.colAxis = QStringLiteral("Variant");
    if (std::find(f.absent.begin(), f.absent.end(), true) != f.absent.end())
        f.absentLabel = QStringLiteral("refused");
    f.title = agreement ? QStringLiteral("Top-1 agreement with exact attention")
                        : QStringLiteral("Mean KL(p_exact ‖ p_variant), nats per position");
    f.colorBar =
        agreement ? render::ColorBar{render::Colormap::Viridis, 0.0f, 1.0f,
                                     QStringLiteral("Share of positions")}
                  : render::ColorBar{render::Colormap::Blues, 0.0f, high, QStringLiteral("nats")};
    return f;
}

void writeEffectFiles(const EffectRequest& request,
                      const std::vector<std::vector<EffectRow>>& rows) {
    render::DataTable table;
    table.header = {"model",        "variant",        "texts",           "positions",
                    "mean_kl_nats", "top1_agreement", "mean_top5_flips", "error"};
    for (std::size_t m = 0; m < rows.size(); ++m)
        for (const EffectRow& row : rows[m])
            table.rows.push_back({request.models[qsizetype(m)], row.variant,
                                  QString::number(row.texts), QString::number(row.positions),
                                  QString::number(row.meanKl, 'g', 9),
                                  QString::number(row.top1Agreement, 'g', 9),
                                  QString::number(row.meanTopKFlips, 'g', 9), row.error});
    render::writeCsv(request.out.filePath(QStringLiteral("variant-effect.csv")), table);
    render::PanelsFigure figure{
        QStringLiteral("What each variant does to the output"),
        QStringLiteral("Each variant against exact attention at the LM head, pooled over every "
                       "position of %1 from %2")
            .arg(counted(request.texts.size(), QStringLiteral("text")), request.corpusName),
        2,
        {effectGrid(request, rows, false), effectGrid(request, rows, true)}};
    render::ExportOptions options = request.options;
    options.caption = {request.models.join(QStringLiteral(", ")),
                       QStringLiteral("variants vs exact attention"), request.corpusName};
    for (const QString& format : request.formats)
        exportToFile(request.out.filePath(QStringLiteral("variant-effect.") + format), figure,
                     options);
}
} // namespace

int runVariantEffectFigures(const CliArgs& args) {
    const EffectRequest request = parseEffectRequest(args);
    std::optional<BackendKind> forced;
    if (args.has("--backend")) forced = args.backend();
    const std::string selector = args.value("--vulkan-device").toStdString();
    std::vector<std::vector<EffectRow>> rows;
    QTextStream out(stdout);
    out << "model       variant          mean KL (nats)  top-1 agreement  top-5 flips\n";
    for (const QString& name : request.models) {
        const std::unique_ptr<LoadedModel> model =
            loadCheckpoint(modelSource(name), chooseBackend(forced, selector), selector);
        try {
            rows.push_back(corpusOutputEffect(*model, request.texts, request.variants,
                                              [&name](std::size_t done, std::size_t total) {
                                                  showEffectProgress(name, done, total);
                                              }));
        } catch (const std::runtime_error& error) {
            throw CliError(name.toStdString() + ": " + error.what());
        }
        for (const EffectRow& row : rows.back()) {
            out << name.leftJustified(11) << ' ' << row.variant.leftJustified(16) << ' ';
            if (row.positions == 0)
                out << "refused: " << row.error << "\n";
            else
                out << QString::number(row.meanKl, 'f', 4).leftJustified(15) << ' '
                    << QString::number(row.top1Agreement, 'f', 3).leftJustified(16) << ' '
                    << QString::number(row.meanTopKFlips, 'f', 2) << "\n";
        }
        out.flush();
    }
    writeEffectFiles(request, rows);
    out << "wrote " << request.formats.size() + 1 << " files to " << request.out.absolutePath()
        << "\n";
    return 0;
}

std::vector<CliOption> variantEffectOptions() {
    return {{"--variants", "LIST",
             "variant-effect: variant spec files (JSON), comma-separated or repeated"}};
}
} // namespace headlight::app
