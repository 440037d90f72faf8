#pragma once
// A bar chart of one value per category: density per head (sparsity view), layers run per token
// (early-exit view). The value axis starts at 0; values are printed above the bars when there is
// room, and one bar can be emphasised (the selected head).

#include "figures/figure_style.h"

#include <QPainter>
#include <QRectF>
#include <QStringList>
#include <vector>

namespace headlight::render {

struct BarChartFigure {
    QString title;
    QStringList labels;        // [N] under the bars
    std::vector<float> values; // [N]
    QString valueAxis;         // e.g. "Share of pairs attended"
    QString categoryAxis;      // e.g. "Head"
    double maxValue = 1.0;     // top of the value axis
    int decimals = 2;          // printed values
    int emphasised = -1;       // drawn in the accent colour, -1 for none
};

struct BarChartLayout {
    QRectF title, plot, valueAxisTitle, categoryAxisTitle;
    double labelHeight = 0.0;
    QFont titleFont, labelFont, tickFont;
};

BarChartLayout layoutBarChart(const QRectF& bounds, const BarChartFigure& figure);
// Each value-axis tick label's box, as tight as its text: what paintBarChart draws there.
std::vector<QRectF> barChartTickLabels(const BarChartLayout& layout, const BarChartFigure& figure);
void paintBarChart(QPainter& painter, const QRectF& bounds, const BarChartFigure& figure);
} // namespace headlight::render
