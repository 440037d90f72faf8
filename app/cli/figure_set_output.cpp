#include "figure_set_output.h"

#include "build_info.h"
#include "cli_args.h"
#include "counted.h"
#include "export/embedded_metadata.h"
#include "export_files.h"
#include "figure_builders.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QTextStream>
#include <cstdio>
#include <map>

namespace headlight::app {
namespace {

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

QString provenanceText(const Provenance& provenance) {
    return QString::fromUtf8(
        QJsonDocument(provenanceToJson(provenance)).toJson(QJsonDocument::Compact));
}
} // namespace

ModelFiles figureSetFiles(const QDir& models, const QStringList& names) {
    ModelFiles all;
    for (const QString& name : names) {
        const ModelFiles files = hashModelFiles(models.filePath(name));
        for (auto [into, from] :
             {std::pair{&all.weights, &files.weights}, std::pair{&all.tokenizer, &files.tokenizer},
              std::pair{&all.config, &files.config}})
            for (const auto& [file, sha] : *from)
                into->emplace(name + QLatin1Char('/') + file, sha);
    }
    return all;
}

QStringList figureFormats(const CliArgs& args) {
    QStringList formats = args.values("--format");
    if (formats.isEmpty()) formats = {QStringLiteral("pdf"), QStringLiteral("png")};
    for (const QString& format : formats)
        if (format != QLatin1String("pdf") && format != QLatin1String("svg") &&
            format != QLatin1String("png"))
            throw CliError("--format must be pdf, svg or png; not '" + format.toStdString() + "'");
    formats.removeDuplicates();
    return formats;
}

QDir figureOutputFolder(const QString& path) {
    QDir out(path);
    if (!out.exists() && !QDir().mkpath(path))
        throw CliError("cannot create the folder " + path.toStdString());
    if (!QFileInfo(out.absolutePath()).isWritable())
        throw CliError("cannot write into " + path.toStdString() + ": the folder is not writable");
    return out;
}

FigureSetOutput startFigureSet(const QString& command, const CliArgs& args,
                               const QString& corpusName, const Provenance& provenance) {
    FigureSetOutput output{command, {}, figureFormats(args), {}, corpusName, {}, provenance};
    output.options.dpi =
        args.integer("--dpi", output.options.dpi, render::kMinDpi, render::kMaxDpi);
    output.out = figureOutputFolder(args.required("--out"));
    output.medians.header = {"model",  "measure", "layer",  "head", "q1",
                             "median", "q3",      "values", "texts"};
    QTextStream(stdout)
        << "layer means of the head medians: entropy (nats) | adjacent-layer JSD (bits)\n";
    return output;
}

void reportLeftOut(const QString& command, const QString& model, const PooledCorpus& corpus) {
    if (corpus.stats.texts == 0)
        throw CliError(model.toStdString() + " could analyse none of the texts" +
                       (corpus.pooled.errors.empty()
                            ? std::string()
                            : "; text " + std::to_string(corpus.pooled.errors.front().index + 1) +
                                  ": " + corpus.pooled.errors.front().message));
    if (!corpus.pooled.errors.empty())
        std::fprintf(stderr, "headlight %s: %s left out %zu of %zu texts; text %zu: %s\n",
                     qPrintable(command), qPrintable(model), corpus.pooled.errors.size(),
                     corpus.pooled.total, corpus.pooled.errors.front().index + 1,
                     corpus.pooled.errors.front().message.c_str());
}

void writeModelFigures(FigureSetOutput& output, const QString& model, const PooledCorpus& corpus) {
    ForwardResult result;
    result.tokens = corpus.firstLabels;
    ViewState unselected;
    unselected.layer = unselected.head = -1;
    render::ExportOptions options = output.options;
    options.caption = {
        model, QStringLiteral("as trained"),
        QStringLiteral("%1 from %2")
            .arg(counted(qint64(corpus.stats.texts), QStringLiteral("text")), output.corpusName)};
    for (const auto& [kind, file] : {std::pair{ViewKind::EntropyViolins, QStringLiteral("entropy")},
                                     std::pair{ViewKind::JsdViolins, QStringLiteral("jsd")}}) {
        render::Figure figure = buildFigure(kind, &result, unselected, &corpus.stats);
        if (auto* violins = std::get_if<render::ViolinFigure>(&figure))
            violins->title = model + QStringLiteral(": ") + violins->title;
        Provenance provenance = output.provenance;
        provenance.modelName = model;
        provenance.scenario.view = viewId(kind).toStdString();
        provenance.dataSha256 = figureDataSha256(figure);
        options.provenance = provenanceText(provenance);
        for (const QString& format : output.formats)
            exportToFile(output.out.filePath(model + "-" + file + "." + format), figure, options);
    }
    addMedianRows(output.medians, model, QStringLiteral("entropy"), corpus.stats.entropy,
                  corpus.stats);
    addMedianRows(output.medians, model, QStringLiteral("jsd"), corpus.stats.jsd, corpus.stats);
    QTextStream out(stdout);
    out << model.leftJustified(11) << layerMeans(corpus.stats.entropy) << " | "
        << layerMeans(corpus.stats.jsd) << "\n";
}

void finishFigureSet(const FigureSetOutput& output, std::size_t models) {
    const QString json = provenanceText(output.provenance);
    render::writeCsv(
        output.out.filePath(QStringLiteral("medians.csv")), output.medians,
        render::csvComments(json, {QStringLiteral("Made by Headlight; regenerate "
                                                  "with: %1")
                                       .arg(shellCommandLine(output.provenance.command))}));
    QTextStream(stdout) << "wrote " << qsizetype(models) * output.formats.size() * 2 + 1
                        << " files to " << output.out.absolutePath() << "\n";
}
} // namespace headlight::app
