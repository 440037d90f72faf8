#pragma once
// What `headlight figures realformer` writes from pooled corpora, shared with `headlight merge`,
// which writes the same files from merged shards: per model MODEL-entropy.EXT and MODEL-jsd.EXT,
// then medians.csv, and on stdout each layer's mean head median.

#include "corpus_analysis.h"
#include "export/figure_data.h"
#include "export/figure_export.h"
#include "provenance.h"

#include <QDir>
#include <QStringList>

namespace headlight::app {

class CliArgs;

struct FigureSetOutput {
    QString command; // "figures" or "merge", for the lines on stderr
    QDir out;
    QStringList formats; // "pdf", "svg", "png"
    render::ExportOptions options;
    QString corpusName;
    render::DataTable medians;
    // What every file written carries (provenance.h): the run's command, corpus and the three
    // models' files; each figure adds its model, view and numbers' hash.
    Provenance provenance;
};

// The zoo models' files, each name prefixed with its model's folder ("post_ln/model.safetensors"):
// a figure set's provenance, which `headlight reproduce` checks against `models` again.
ModelFiles figureSetFiles(const QDir& models, const QStringList& names);

// --format (default pdf and png), --dpi and the --out folder (made if missing). Throws CliError.
QStringList figureFormats(const CliArgs& args);
QDir figureOutputFolder(const QString& path);
// Prints the stdout header. Throws CliError for bad --format or --dpi, or an unusable --out.
FigureSetOutput startFigureSet(const QString& command, const CliArgs& args,
                               const QString& corpusName, const Provenance& provenance);
// Throws CliError when the model analysed no text; says on stderr how many it left out.
void reportLeftOut(const QString& command, const QString& model, const PooledCorpus& corpus);
// The model's two figures in each format, its median rows and its stdout line.
void writeModelFigures(FigureSetOutput& output, const QString& model, const PooledCorpus& corpus);
// medians.csv and the stdout summary.
void finishFigureSet(const FigureSetOutput& output, std::size_t models);
} // namespace headlight::app
