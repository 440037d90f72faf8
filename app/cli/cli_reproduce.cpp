// `headlight reproduce FIGURE`: reads the provenance an export wrote into FIGURE
// (app/figures/provenance.h), checks that the model files and the corpus are the ones it was made
// from, runs its `headlight export` command (or, for a file of `headlight figures`, that command)
// again into a temporary folder and compares the two files:
//
//   PNG          every pixel
//   SVG          the drawing: the whole file less its <metadata> element
//   PDF          the page: the file less the XMP packet, the creation date and the xref table
//   CSV          the table: the file less its leading "#" lines
//   safetensors  every tensor's bytes
//
// and, for every format, the SHA-256 of the figure's numbers. Exit 0 when identical, 1 with one
// line saying what differs, or 1 with one line saying why it cannot reproduce (no provenance,
// the model folder or the corpus is missing, a file of it changed, or the file was merged from
// corpus shards).
#include "cli.h"
#include "cli_args.h"
#include "export/embedded_metadata.h"
#include "export_files.h"
#include "figure_set_output.h"
#include "io/safetensors.h"
#include "provenance.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTextStream>

namespace headlight::app {
namespace {

QString shortHash(const QString& sha) {
    return sha.left(12) + QStringLiteral("…");
}

void checkFiles(const QString& folder, const FileHashes& recorded, const FileHashes& now) {
    for (const auto& [file, sha] : recorded) {
        const QString path = folder + QLatin1Char('/') + file;
        const auto found = now.find(file);
        if (found == now.end())
            throw CliError(
                ("cannot reproduce: the model changed: " + path + " is missing").toStdString());
        if (found->second != sha)
            throw CliError(QStringLiteral("cannot reproduce: the model changed: %1 has SHA-256 "
                                          "%2, the figure was made from %3")
                               .arg(path, shortHash(found->second), shortHash(sha))
                               .toStdString());
    }
}

// The models of a figure set's provenance: the folders its file names start with.
QStringList figureSetModels(const Provenance& provenance) {
    QStringList models;
    for (const FileHashes* role :
         {&provenance.files.weights, &provenance.files.tokenizer, &provenance.files.config})
        for (const auto& [file, sha] : *role)
            models << file.section(QLatin1Char('/'), 0, 0);
    models.removeDuplicates();
    return models;
}

void checkInputs(const Provenance& provenance) {
    const QString& folder = provenance.modelFolder;
    if (!QFileInfo(folder).isDir())
        throw CliError(
            ("cannot reproduce: the model folder " + folder + " is missing").toStdString());
    const bool figureSet = provenance.command.value(0) == QLatin1String("figures");
    const ModelFiles now = figureSet ? figureSetFiles(QDir(folder), figureSetModels(provenance))
                                     : hashModelFiles(folder);
    checkFiles(folder, provenance.files.weights, now.weights);
    checkFiles(folder, provenance.files.tokenizer, now.tokenizer);
    checkFiles(folder, provenance.files.config, now.config);
    if (!provenance.corpus) return;
    const QString& corpus = provenance.corpus->path;
    if (!QFileInfo(corpus).isFile())
        throw CliError(("cannot reproduce: the corpus " + corpus + " is missing").toStdString());
    if (fileSha256(corpus) != provenance.corpus->sha256)
        throw CliError(("cannot reproduce: the corpus " + corpus + " changed").toStdString());
}

// The recorded command with its --out pointed at `out`: the file for `export`, the folder the
// file is written into for `figures`.
QStringList rerunArguments(const Provenance& provenance, const QString& out) {
    QStringList args = provenance.command;
    const qsizetype at = args.indexOf(QStringLiteral("--out"));
    if (args.value(0) == QLatin1String("merge"))
        throw CliError("cannot reproduce: the figure was merged from corpus shards (`headlight "
                       "merge`); run the shards and the merge again (docs/scale.md)");
    if ((args.value(0) != QLatin1String("export") && args.value(0) != QLatin1String("figures")) ||
        at < 0 || at + 1 >= args.size())
        throw CliError("cannot reproduce: the recorded command is not a `headlight export ... "
                       "--out FILE` or `headlight figures ... --out DIR` command");
    args[at + 1] = args[0] == QLatin1String("figures") ? QFileInfo(out).absolutePath() : out;
    return args;
}

// A variant or scene file the command names may have been edited since.
void checkScenario(const Provenance& provenance, const QStringList& args) {
    io::Scenario now = exportScenario(args);
    now.backend = provenance.scenario.backend; // --backend pins what the window ran on
    if (now != provenance.scenario)
        throw CliError("cannot reproduce: the command now describes another scenario than the "
                       "figure's (a variant or scene file it names was edited)");
}

QByteArray readBytes(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw CliError(("cannot read " + path + ": " + file.errorString()).toStdString());
    return file.readAll();
}

// The page as drawn: the PDF less what does not draw it and may differ between two runs of the
// same command. Qt writes the creation date from the clock; the XMP packet (and so its stream's
// /Length and every object's offset in the xref table after it) holds the provenance, whose
// command names the output file.
QByteArray pdfPage(const QByteArray& pdf) {
    static const QRegularExpression date(QStringLiteral(R"(/CreationDate \(D:[^)]*\))"));
    static const QRegularExpression xmpLength(QStringLiteral(R"(/Subtype /XML\s*/Length \d+)"));
    static const QRegularExpression packet(
        QStringLiteral(R"(<\?xpacket begin.*<\?xpacket end[^>]*>)"),
        QRegularExpression::DotMatchesEverythingOption);
    QString text = QString::fromLatin1(pdf);
    text.remove(date).remove(xmpLength).remove(packet);
    const qsizetype xref = text.lastIndexOf(QStringLiteral("\nxref\n"));
    return text.left(xref < 0 ? text.size() : xref).toLatin1();
}

QString comparePng(const QString& original, const QString& again) {
    const QImage a = QImage(original).convertToFormat(QImage::Format_ARGB32);
    const QImage b = QImage(again).convertToFormat(QImage::Format_ARGB32);
    if (a.size() != b.size())
        return QStringLiteral("the image is %1 × %2 pixels, its reproduction %3 × %4")
            .arg(a.width())
            .arg(a.height())
            .arg(b.width())
            .arg(b.height());
    qint64 differing = 0;
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x)
            differing += a.pixel(x, y) != b.pixel(x, y);
    if (differing == 0) return {};
    return QStringLiteral("%1 of %2 pixels differ")
        .arg(differing)
        .arg(qint64(a.width()) * a.height());
}

QString compareTensors(const QString& original, const QString& again) {
    const io::SafetensorsFile a(original.toStdString()), b(again.toStdString());
    if (a.tensors().size() != b.tensors().size()) return QStringLiteral("the tensors differ");
    for (const auto& [name, info] : a.tensors()) {
        if (!b.contains(name) || b.info(name).shape != info.shape)
            return QStringLiteral("tensor '%1' differs in shape").arg(QString::fromStdString(name));
        const auto x = a.bytes(name), y = b.bytes(name);
        if (!std::equal(x.begin(), x.end(), y.begin(), y.end()))
            return QStringLiteral("tensor '%1' differs").arg(QString::fromStdString(name));
    }
    return {};
}

// What differs between the two files, in the terms of their format; empty when nothing does.
QString compareFiles(ExportFormat format, const QString& original, const QString& again) {
    switch (format) {
    case ExportFormat::Png:
        return comparePng(original, again);
    case ExportFormat::Svg:
        return render::svgWithoutMetadata(readBytes(original)) ==
                       render::svgWithoutMetadata(readBytes(again))
                   ? QString()
                   : QStringLiteral("the SVG drawing differs");
    case ExportFormat::Pdf:
        return pdfPage(readBytes(original)) == pdfPage(readBytes(again))
                   ? QString()
                   : QStringLiteral("the PDF page differs");
    case ExportFormat::Csv:
        return render::csvWithoutComments(readBytes(original)) ==
                       render::csvWithoutComments(readBytes(again))
                   ? QString()
                   : QStringLiteral("the table differs");
    case ExportFormat::Safetensors:
        return compareTensors(original, again);
    }
    return {};
}

std::optional<Provenance> provenanceOf(const QString& figure) {
    try {
        return readProvenance(figure);
    } catch (const std::runtime_error& error) {
        throw CliError(std::string("cannot reproduce ") + figure.toStdString() + ": " +
                       error.what());
    }
}

int runReproduce(const CliArgs& args) {
    if (args.operands().size() != 1) throw CliUsageError("name one FIGURE to reproduce");
    const QString figure = args.operands().front();
    const std::optional<ExportFormat> format = exportFormatFor(figure);
    if (!format)
        throw CliError("cannot reproduce " + figure.toStdString() + ": not a " +
                       exportExtensions().toStdString() + " file");
    const std::optional<Provenance> provenance = provenanceOf(figure);
    if (!provenance)
        throw CliError("cannot reproduce " + figure.toStdString() +
                       ": it carries no Headlight provenance");
    QTemporaryDir folder;
    if (!folder.isValid()) throw CliError("cannot make a temporary folder");
    // Under the same name, so that the reproduction records the same command (docs/export.md).
    const QString again = folder.filePath(QFileInfo(figure).fileName());
    const QStringList rerun = rerunArguments(*provenance, again);
    checkInputs(*provenance);
    const bool figureSet = rerun.front() == QLatin1String("figures");
    if (!figureSet) checkScenario(*provenance, rerun.mid(1));
    const CliCommand command = figureSet ? figuresCommand() : exportCommand();
    if (const int code = command.run(CliArgs(rerun.mid(1), command)); code != 0) return code;
    QString difference = compareFiles(*format, figure, again);
    const std::optional<Provenance> made = readProvenance(again);
    if (difference.isEmpty() && made && made->dataSha256 != provenance->dataSha256)
        difference = QStringLiteral("the figure's numbers differ");
    QTextStream out(stdout);
    if (!difference.isEmpty()) {
        out << "differs: " << figure << ": " << difference << " ("
            << shellCommandLine(provenance->command) << ")\n";
        return 1;
    }
    out << "identical: " << figure << "\n";
    return 0;
}
} // namespace

CliCommand reproduceCommand() {
    return {
        QStringLiteral("reproduce"),
        QStringLiteral("re-run the export command a figure records and say whether the result "
                       "is identical"),
        {QStringLiteral("FIGURE")},
        {{QStringLiteral("FIGURE"),
          QStringLiteral("a .png, .svg, .pdf, .csv or .safetensors file that `headlight export` "
                         "or the window wrote")}},
        {},
        {QStringLiteral("headlight reproduce violins.pdf")},
        &runReproduce,
    };
}
} // namespace headlight::app
