#pragma once
// The numbers behind a figure, for a paper's tables and for re-plotting elsewhere: a CSV table
// and named f32 tensors (the app writes those as safetensors). Taken from the figure value
// itself, so the data is exactly what the figure shows, in its order and under its labels.
//
//   heatmap (attention, rollout, difference, head × head JSD)
//              table: one row per matrix row, first column its label, a column per column label
//              tensor "values" [rows, cols]
//   token lines  as the heatmap; tensor "weights" [T, T]
//   model grid   table: layer, head, query, key, weight (long form); tensor "attention" [L, H, T,
//   T] violins      table: panel, layer, head, q1, median, q3, band, in the figure's order (heads
//   by
//                median); tensors "q1", "median", "q3" [panels, heads] by head index,
//                "density" [panels, heads, G] and "grid" [G]
//   panels       table: panel, row, column, value (long form; a bar chart's column is empty, a
//                category grid's value its category; a line chart's row its line's name, column
//                x); tensor "panel{i}" [rows, cols] or [N], a line chart's "panel{i}.{line}" [N, 2]
//   scatters     (panels with a scatter or scatter grid) table: panel, role (query | key),
//                position, token, kind, x, y, one row per drawn point of the first scatter
//                panel, or, with none, of every grid cell ("panel": its title, "L0 H3 · 52%");
//                tensors "panel{i}" and "panel{i}.{cell}" [N, 2]
//
// CSV: UTF-8, comma-separated, "\n" line ends, fields quoted as RFC 4180 says (commas, quotes
// and line breaks in token labels), numbers with 9 significant digits (a float round-trips).

#include "export/figure_export.h"

#include <QIODevice>
#include <QStringList>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace headlight::render {

struct DataTable {
    QStringList header;
    std::vector<QStringList> rows;
};

struct DataTensor {
    std::string name;
    std::vector<int64_t> shape;
    std::vector<float> values;
};

struct FigureData {
    DataTable table;
    std::vector<DataTensor> tensors;
    std::map<std::string, std::string> metadata; // title, labels (JSON arrays), axis names
};

// Throws ExportError when the figure holds no data (an empty figure's message).
FigureData figureData(const PageContent& content);

QString csvField(const QString& text);
QByteArray csvBytes(const DataTable& table);
// Atomic, as every export (export/atomic_write.h), after `comments` (whole "#" lines, e.g.
// export/embedded_metadata.h's csvComments). Throws ExportError.
void writeCsv(const QString& path, const DataTable& table, const QByteArray& comments = {});
} // namespace headlight::render
