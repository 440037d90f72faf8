#include "export_files.h"

#include "export/atomic_write.h"
#include "export/embedded_metadata.h"
#include "export/figure_data.h"
#include "io/safetensors.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

namespace headlight::app {
namespace {

// A person opening the CSV reads how to regenerate it before the machine-readable line.
QByteArray csvComments(const QString& provenance) {
    if (provenance.isEmpty()) return {};
    const QString command =
        QJsonDocument::fromJson(provenance.toUtf8()).object().value("command_line").toString();
    return render::csvComments(
        provenance, {QStringLiteral("Made by Headlight; regenerate with: %1").arg(command)});
}

void writeTensors(const QString& path, const render::FigureData& data,
                  const render::ExportOptions& options) {
    const render::FigureCaption& caption = options.caption;
    std::vector<io::TensorToWrite> tensors;
    for (const render::DataTensor& t : data.tensors)
        tensors.push_back({t.name, t.shape, t.values, {}});
    std::map<std::string, std::string> metadata = data.metadata;
    metadata["model"] = caption.model.toStdString();
    metadata["variant"] = caption.variant.toStdString();
    metadata["text"] = caption.text.toStdString();
    if (!options.provenance.isEmpty())
        metadata[render::kProvenanceKey] = options.provenance.toStdString();
    io::writeSafetensors(path.toStdString(), tensors, metadata);
}
} // namespace

std::optional<ExportFormat> exportFormatFor(const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("png")) return ExportFormat::Png;
    if (suffix == QLatin1String("svg")) return ExportFormat::Svg;
    if (suffix == QLatin1String("pdf")) return ExportFormat::Pdf;
    if (suffix == QLatin1String("csv")) return ExportFormat::Csv;
    if (suffix == QLatin1String("safetensors")) return ExportFormat::Safetensors;
    return std::nullopt;
}

bool isFigureFormat(ExportFormat format) {
    return format == ExportFormat::Png || format == ExportFormat::Svg ||
           format == ExportFormat::Pdf;
}

QString exportExtensions() {
    return QStringLiteral(".png, .svg, .pdf, .csv or .safetensors");
}

void exportToFile(const QString& path, const render::PageContent& content,
                  const render::ExportOptions& options) {
    const std::optional<ExportFormat> format = exportFormatFor(path);
    if (!format) {
        const QString suffix = QFileInfo(path).suffix();
        render::failExport(path, (suffix.isEmpty()
                                      ? QStringLiteral("the name has no extension")
                                      : QStringLiteral("unknown extension '.%1'").arg(suffix)) +
                                     QStringLiteral(": use ") + exportExtensions());
    }
    switch (*format) {
    case ExportFormat::Png:
    case ExportFormat::Svg:
    case ExportFormat::Pdf:
        return render::exportFigure(path, *render::imageFormatFor(path), content, options);
    case ExportFormat::Csv:
        return render::writeCsv(path, render::figureData(content).table,
                                csvComments(options.provenance));
    case ExportFormat::Safetensors:
        return writeTensors(path, render::figureData(content), options);
    }
}

void exportTable(const QString& path, const render::DataTable& table,
                 const render::ExportOptions& options) {
    render::writeCsv(path, table, csvComments(options.provenance));
}
} // namespace headlight::app
