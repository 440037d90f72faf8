#pragma once
// A line chart of y against x with linear axes from the data's range (y from 0 when all values are
// positive and near it): the zoo's training loss curves, and the training scrubber's measures over
// checkpoints (several named lines with a legend, and a marker at the checkpoint shown). Painted
// with the figures' fonts and page.

#include "figures/figure_style.h"

#include <QPainter>
#include <QRectF>
#include <optional>
#include <vector>

namespace headlight::render {

struct LineSeries {
    QString name;
    std::vector<QPointF> points; // ascending x
};

struct LineChartFigure {
    QString title;
    QString xAxis, yAxis;
    std::vector<QPointF> points;    // ascending x
    QString name;                   // the points' line in the legend, drawn when `others` has lines
    std::vector<LineSeries> others; // further lines, each in the next colour
    std::optional<double> marker;   // a vertical line at this x
};

struct LineChartLayout {
    QRectF title, plot, xAxisTitle, yAxisTitle;
    double xLow = 0.0, xHigh = 1.0, yLow = 0.0, yHigh = 1.0;
    QFont titleFont, labelFont, tickFont;
};

LineChartLayout layoutLineChart(const QRectF& bounds, const LineChartFigure& figure);
QPointF lineChartPoint(const LineChartLayout& layout, QPointF value); // data → page coordinates
// Each y-axis tick label's box, as tight as its text: what paintLineChart draws there.
std::vector<QRectF> lineChartTickLabels(const LineChartLayout& layout);
void paintLineChart(QPainter& painter, const QRectF& bounds, const LineChartFigure& figure);
} // namespace headlight::render
