#pragma once
// One way into every export file, for the window's File ▸ Export… and for `headlight export`:
// the path's extension picks the format. Figures go to PNG, SVG or PDF (render/export), the
// figure's numbers to CSV or safetensors (io::writeSafetensors, with the caption and the
// figure's labels as metadata). Every file is written atomically, and carries the options'
// provenance (app/figures/provenance.h) when it is set.

#include "export/figure_data.h"
#include "export/figure_export.h"

#include <QString>
#include <optional>

namespace headlight::app {

enum class ExportFormat { Png, Svg, Pdf, Csv, Safetensors };

std::optional<ExportFormat> exportFormatFor(const QString& path); // by extension, any case
bool isFigureFormat(ExportFormat format);                         // PNG, SVG or PDF
QString exportExtensions(); // ".png, .svg, .pdf, .csv or .safetensors", for messages

// Throws std::runtime_error (one line: render::ExportError or io::CheckpointError) for an unknown
// extension, a figure with no data, or a file that cannot be written.
void exportToFile(const QString& path, const render::PageContent& content,
                  const render::ExportOptions& options);
// A table of a view's own (the kNN-LM neighbours) as CSV with the options' provenance. Throws
// render::ExportError.
void exportTable(const QString& path, const render::DataTable& table,
                 const render::ExportOptions& options);
} // namespace headlight::app
