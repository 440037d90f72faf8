#include "figures/bar_chart.h"

#include <algorithm>
#include <cmath>

namespace headlight::render {
namespace {

constexpr double kPad = 12.0;
constexpr int kTicks = 4;       // intervals on the value axis
const QColor kBar{0, 114, 178}; // Okabe–Ito blue

QString tickText(double value) {
    return QString::number(value, 'g', 3);
}

double barY(const BarChartLayout& layout, const BarChartFigure& figure, double value) {
    const double t = figure.maxValue > 0 ? std::clamp(value / figure.maxValue, 0.0, 1.0) : 0.0;
    return layout.plot.bottom() - t * layout.plot.height();
}

QRectF barRect(const BarChartLayout& layout, const BarChartFigure& figure, int index) {
    const double slot = layout.plot.width() / std::max<std::size_t>(figure.values.size(), 1);
    const double x = layout.plot.left() + index * slot + 0.15 * slot;
    const double top = barY(layout, figure, figure.values[std::size_t(index)]);
    return QRectF(x, top, 0.7 * slot, layout.plot.bottom() - top);
}

// The value axis's ticks: round values from 0 up to the axis's top.
std::vector<double> tickValues(const BarChartFigure& f) {
    return roundTicks(0.0, f.maxValue, kTicks);
}

// The widest tick label sets the room left of the plot: "0.25" is wider than the top's "1".
double widestTick(const QFont& font, const BarChartFigure& f) {
    double widest = 0.0;
    for (const double value : tickValues(f))
        widest = std::max(widest, textWidth(font, tickText(value)));
    return widest;
}

void paintValueAxis(QPainter& painter, const BarChartLayout& layout, const BarChartFigure& f) {
    painter.setFont(layout.tickFont);
    const std::vector<QRectF> labels = barChartTickLabels(layout, f);
    const std::vector<double> values = tickValues(f);
    for (std::size_t i = 0; i < values.size(); ++i) {
        const double y = barY(layout, f, values[i]);
        painter.setPen(QPen(style::kGrid, 1.0));
        painter.drawLine(QPointF(layout.plot.left(), y), QPointF(layout.plot.right(), y));
        painter.setPen(style::kInk);
        drawTextLine(painter, labels[i], Qt::AlignRight, tickText(values[i]));
    }
}

void paintBars(QPainter& painter, const BarChartLayout& layout, const BarChartFigure& figure) {
    painter.setFont(layout.tickFont);
    const double h = fontHeight(layout.tickFont);
    for (int i = 0; i < int(figure.values.size()); ++i) {
        const QRectF bar = barRect(layout, figure, i);
        painter.fillRect(bar, i == figure.emphasised ? style::kAccent : kBar);
        const QString text = QString::number(figure.values[std::size_t(i)], 'f', figure.decimals);
        if (textWidth(layout.tickFont, text) > bar.width() * 1.3) continue;
        painter.setPen(style::kInk);
        drawTextLine(
            painter,
            QRectF(bar.center().x() - bar.width(), bar.top() - h - 2.0, 2 * bar.width(), h),
            Qt::AlignHCenter, text);
    }
}
} // namespace

BarChartLayout layoutBarChart(const QRectF& bounds, const BarChartFigure& figure) {
    BarChartLayout layout;
    layout.titleFont = figureFont(bounds, TextRole::Title);
    layout.labelFont = figureFont(bounds, TextRole::Label);
    layout.tickFont = figureFont(bounds, TextRole::Tick);
    layout.title = QRectF(bounds.left() + kPad, bounds.top() + kPad / 2, bounds.width() - 2 * kPad,
                          lineHeight(layout.titleFont, figure.title) + kPad / 2);
    const double axisBand = fontHeight(layout.labelFont);
    const double tickWidth = widestTick(layout.tickFont, figure) + kLabelGap;
    const double left = bounds.left() + kPad + axisBand + tickWidth + kLabelGap;
    // Room above the tallest bar for its printed value.
    const double top = layout.title.bottom() + kPad / 2 + fontHeight(layout.tickFont);
    QRectF plot(left, top, std::max(bounds.right() - kPad - left, 1.0), 1.0);
    const bool rotated = columnLabelsRotate(plot, figure.labels, layout.labelFont);
    layout.labelHeight =
        columnLabelsHeight(figure.labels, layout.labelFont, rotated, 0.25 * bounds.height());
    plot.setBottom(std::max(bounds.bottom() - kPad - axisBand - layout.labelHeight, top + 1.0));
    layout.plot = plot;
    layout.valueAxisTitle = QRectF(bounds.left() + kPad, plot.top(), axisBand, plot.height());
    layout.categoryAxisTitle =
        QRectF(plot.left(), plot.bottom() + layout.labelHeight, plot.width(), axisBand);
    return layout;
}

std::vector<QRectF> barChartTickLabels(const BarChartLayout& layout, const BarChartFigure& figure) {
    std::vector<QRectF> labels;
    const double h = fontHeight(layout.tickFont);
    for (const double value : tickValues(figure)) {
        const double y = barY(layout, figure, value);
        const double w = textWidth(layout.tickFont, tickText(value));
        labels.emplace_back(layout.plot.left() - kLabelGap - w, y - h / 2, w, h);
    }
    return labels;
}

void paintBarChart(QPainter& painter, const QRectF& bounds, const BarChartFigure& figure) {
    painter.save();
    painter.fillRect(bounds, style::kPage);
    const BarChartLayout layout = layoutBarChart(bounds, figure);
    paintTitle(painter, layout.title, figure.title, layout.titleFont);
    paintValueAxis(painter, layout, figure);
    paintBars(painter, layout, figure);
    painter.setPen(QPen(style::kInk, 1.0));
    painter.drawLine(layout.plot.bottomLeft(), layout.plot.bottomRight());
    painter.drawLine(layout.plot.bottomLeft(), layout.plot.topLeft());
    paintColumnLabels(painter, layout.plot, layout.labelHeight, figure.labels, figure.emphasised,
                      layout.labelFont);
    paintAxisTitle(painter, layout.valueAxisTitle, figure.valueAxis, layout.labelFont, true);
    paintAxisTitle(painter, layout.categoryAxisTitle, figure.categoryAxis, layout.labelFont, false);
    painter.restore();
}
} // namespace headlight::render
