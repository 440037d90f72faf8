#include "cli_export_checkpoints.h"

#include "backend/backend_choice.h"
#include "checkpoint_metrics.h"
#include "cli.h"
#include "cli_args.h"
#include "cli_atlas.h"
#include "export/animated_png.h"
#include "export/atomic_write.h"
#include "export/figure_export.h"
#include "export_files.h"
#include "figure_builders.h"
#include "provenance.h"
#include "scene_files.h"
#include "scene_render.h"
#include "series_source.h"
#include "training_figure.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QRegularExpression>
#include <cstdio>

namespace headlight::app {
namespace {

// --revision-filter: the checkpoints whose label the expression matches (anywhere in it).
void filterCheckpoints(io::CheckpointSeries& series, const CliArgs& args) {
    if (!args.has("--revision-filter")) return;
    const QRegularExpression pattern(args.value("--revision-filter"));
    if (!pattern.isValid())
        throw CliError("--revision-filter '" + args.value("--revision-filter").toStdString() +
                       "' is not a regular expression (" + pattern.errorString().toStdString() +
                       ")");
    std::erase_if(series.checkpoints, [&pattern](const io::SeriesCheckpoint& checkpoint) {
        return !pattern.match(QString::fromStdString(checkpoint.label)).hasMatch();
    });
    if (series.checkpoints.empty())
        throw CliError("--revision-filter '" + args.value("--revision-filter").toStdString() +
                       "' matches no checkpoint of " + series.name);
}

// --text or --text-file, else the run's own text.
QString seriesText(const CliArgs& args, const io::CheckpointSeries& series) {
    if (args.has("--text") && args.has("--text-file"))
        throw CliError("give one of --text and --text-file");
    if (args.has("--text") || args.has("--text-file")) return exportText(args);
    if (series.text.empty())
        throw CliError(series.name + " names no text of its own: give --text or --text-file");
    return QString::fromStdString(series.text);
}

void reportCheckpoint(int done, int total, const QString& label) {
    if (done < total)
        std::fprintf(stderr, "headlight export: checkpoint %d/%d %s\n", done + 1, total,
                     qPrintable(label));
}

QString checkpointProvenance(Provenance provenance, const QStringList& command) {
    provenance.command = command;
    return QString::fromUtf8(
        QJsonDocument(provenanceToJson(provenance)).toJson(QJsonDocument::Compact));
}

render::ExportOptions checkpointPage(const CliArgs& args) {
    render::ExportOptions options;
    options.dpi = args.integer("--dpi", options.dpi, render::kMinDpi, render::kMaxDpi);
    return options;
}

// The lines over training as a figure (PNG, SVG, PDF) or a table (CSV).
int exportTrainingLines(const CliArgs& args, const io::CheckpointSeries& series,
                        const QString& text, const QStringList& command) {
    const QString out = args.required("--out");
    const std::optional<ExportFormat> format = exportFormatFor(out);
    if (!format || *format == ExportFormat::Safetensors)
        throw CliError("--view training writes .png, .svg, .pdf or .csv, not " + out.toStdString());
    const BackendChoice choice =
        chooseBackend(args.has("--backend") ? std::optional(args.backend()) : std::nullopt,
                      args.value("--vulkan-device").toStdString());
    TrainingCurves curves{series, text, {}};
    curves.metrics = measureSeries(series, text, choice, [](int done, int total, const QString& l) {
        reportCheckpoint(done, total, l);
        return true;
    });
    const render::PanelsFigure figure = trainingFigure(curves, -1);
    io::Scenario scenario;
    scenario.model = series.source;
    scenario.text = text.toStdString();
    scenario.view = viewId(ViewKind::Training).toStdString();
    // Why the last checkpoint: the provenance's files and backend are one model's.
    const auto last =
        loadCheckpoint(QString::fromStdString(series.checkpoints.back().folder), choice, {});
    Provenance provenance = describeExport(*last, scenario, figure);
    provenance.modelName = QString::fromStdString(series.name);
    render::ExportOptions options = checkpointPage(args);
    options.caption.model = QString::fromStdString(series.name);
    options.caption.text = text;
    options.provenance = checkpointProvenance(provenance, command);
    if (*format == ExportFormat::Csv)
        exportTable(out, trainingTable(curves), options);
    else
        exportToFile(out, figure, options);
    return 0;
}

// Where --out sends a view's frames: a folder of numbered PNGs, or one animated PNG.
struct FramesTarget {
    QString out;
    bool animation = false; // --out FILE.png or FILE.apng
};

FramesTarget framesTarget(const CliArgs& args) {
    const QString out = args.required("--out");
    const QString suffix = QFileInfo(out).suffix().toLower();
    if (suffix == QLatin1String("png") || suffix == QLatin1String("apng")) return {out, true};
    if (exportFormatFor(out))
        throw CliError("--out " + out.toStdString() +
                       ": the frames of a view go to a folder (frame_0000.png, …) or to one "
                       "animated .png or .apng; --view training writes one file");
    if (!QDir().mkpath(out)) throw CliError("cannot create the folder " + out.toStdString());
    return {out, false};
}

// The view at every checkpoint, drawn as `export --scene` draws a scene: each frame as the PNG
// file it would be on its own (page, caption and provenance).
std::vector<QByteArray> renderFrames(const CliArgs& args, const io::CheckpointSeries& series,
                                     const QString& text, const QStringList& command,
                                     const QString& out) {
    const ViewKind view = viewKindFromId(args.required("--view").toStdString());
    const std::string selector = args.value("--vulkan-device").toStdString();
    const int total = int(series.checkpoints.size());
    std::vector<QByteArray> frames;
    for (int i = 0; i < total; ++i) {
        const io::SeriesCheckpoint& checkpoint = series.checkpoints[std::size_t(i)];
        reportCheckpoint(i, total, QString::fromStdString(checkpoint.label));
        io::Scenario scenario;
        scenario.model = checkpoint.folder;
        scenario.text = text.toStdString();
        scenario.view = viewId(view).toStdString();
        scenario.selection.layer = args.integer("--layer", 0, 0, 1 << 30);
        scenario.selection.head = args.integer("--head", 0, 0, 1 << 30);
        if (args.has("--backend")) scenario.backend = args.backend();
        const RenderedScene rendered = renderScenario(scenario, QDir::currentPath(), selector);
        render::ExportOptions options = checkpointPage(args);
        options.caption = rendered.caption;
        options.caption.model = QString::fromStdString(series.name + " · " + checkpoint.label);
        options.provenance = checkpointProvenance(
            describeExport(*rendered.model, scenario, rendered.content), command);
        frames.push_back(render::pngBytes(out, rendered.content, options));
    }
    return frames;
}

// The frames as frame_0000.png, … in a folder, or as one animated PNG (--frame-ms each).
int exportFrames(const CliArgs& args, const io::CheckpointSeries& series, const QString& text,
                 const QStringList& command) {
    const FramesTarget target = framesTarget(args);
    if (!target.animation && args.has("--frame-ms"))
        throw CliError("--frame-ms is for an animated --out (.png or .apng)");
    const int frameMs = args.integer("--frame-ms", 600, 1, 65535);
    const std::vector<QByteArray> frames = renderFrames(args, series, text, command, target.out);
    if (target.animation) {
        render::writeBytesAtomically(target.out, render::animatedPng(target.out, frames, frameMs));
        return 0;
    }
    const QDir folder(target.out);
    for (std::size_t i = 0; i < frames.size(); ++i)
        render::writeBytesAtomically(
            folder.filePath(QStringLiteral("frame_%1.png").arg(int(i), 4, 10, QLatin1Char('0'))),
            frames[i]);
    return 0;
}

void checkViewName(const QString& name) {
    for (const std::string& id : sceneVocabulary().views)
        if (QString::fromStdString(id) == name) return;
    throw CliError("unknown view '" + name.toStdString() +
                   "': 'headlight export --list-views' names them");
}
} // namespace

int runCheckpointExport(const CliArgs& args, const QStringList& regenerationCommand) {
    for (const char* flag : {"--model", "--revision", "--texts", "--variant", "--scene",
                             "--scenario", "--region", "--pool", "--overlay", "--lambda"})
        if (args.has(flag))
            throw CliError(std::string("--checkpoints names the models; leave out ") + flag);
    const QString view = args.required("--view");
    checkViewName(view);
    io::CheckpointSeries series = openCheckpointSeries(args.value("--checkpoints"));
    filterCheckpoints(series, args);
    const QString text = seriesText(args, series);
    if (view == viewId(ViewKind::Training)) {
        if (args.has("--frame-ms")) throw CliError("--frame-ms is for the frames of a view");
        return exportTrainingLines(args, series, text, regenerationCommand);
    }
    return exportFrames(args, series, text, regenerationCommand);
}
} // namespace headlight::app
