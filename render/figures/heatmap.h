#pragma once
// A heatmap of a rows × columns matrix with token labels on both axes and a colour bar: one
// attention head (query × key), the attention rollout, the head × head JSD matrix and the
// difference map A − B all draw through it. Cells stay square; values are printed in the cells
// when they are large enough to hold them
// (or, given, a text per cell).

#include "figures/figure_style.h"

#include <QPainter>
#include <QRectF>
#include <QStringList>
#include <functional>
#include <optional>
#include <vector>

namespace headlight::render {

struct HeatmapFigure {
    QString title;
    int rows = 0;
    int cols = 0;
    std::vector<float> values; // [rows · cols], row-major
    QStringList rowLabels;     // [rows]
    QStringList colLabels;     // [cols]
    QString rowAxis;           // e.g. "Query token"
    QString colAxis;           // e.g. "Key token"
    ColorBar colorBar;         // map, value range and its label
    int emphasisedRow = -1;    // outlined (the selected query token), -1 for none
    // Cells without a value ([rows · cols], or empty for none), hatched so that they do not read
    // as a value of 0, and what the hatching means, named under the colour bar (e.g. "halted").
    std::vector<bool> absent;
    QString absentLabel;
    // Consecutive rows that are one row of the model (a funnel layer's pooled query, drawn per
    // token), as run lengths summing to `rows`; each run is labelled once with its labels joined.
    // Empty: every row its own.
    std::vector<int> rowGroups;
    // Text printed in the cells instead of their values ([rows · cols], or empty for the values),
    // elided to the cell (the logit lens names each cell's top token).
    QStringList cellText;
    // Painted over the cells, given their rectangle (the atlas's mask outline); may be empty.
    std::function<void(QPainter&, const QRectF& cells)> overlay;
};

// Where each part of a heatmap lands inside `bounds`; hit-testing uses the same numbers.
struct HeatmapLayout {
    QRectF title, plot, colorBar, rowAxisTitle, colAxisTitle;
    QRectF absentKey; // the hatched swatch and its label under the colour bar; empty if none
    double rowLabelWidth = 0.0;
    double colLabelHeight = 0.0;
    QFont titleFont, labelFont, tickFont;
};

HeatmapLayout layoutHeatmap(const QRectF& bounds, const HeatmapFigure& figure);
QRectF heatmapCellRect(const HeatmapLayout& layout, const HeatmapFigure& figure, int row, int col);
// The (row, column) under `point`, if it is on a cell.
std::optional<std::pair<int, int>> heatmapCellAt(const HeatmapLayout& layout,
                                                 const HeatmapFigure& figure, QPointF point);

// The row labels as drawn: one per row, or one per group of `rowGroups` (its labels joined),
// with the first row and the count of each.
struct RowLabel {
    QString text;
    int first = 0, count = 1;
};
std::vector<RowLabel> heatmapRowLabels(const HeatmapFigure& figure);

bool heatmapCellAbsent(const HeatmapFigure& figure, int row, int col);
// Diagonal lines over `area` (drawn as lines, so PDF and SVG keep them as vectors).
void paintHatching(QPainter& painter, const QRectF& area);

void paintHeatmap(QPainter& painter, const QRectF& bounds, const HeatmapFigure& figure);
} // namespace headlight::render
