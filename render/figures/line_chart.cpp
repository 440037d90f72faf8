#include "figures/line_chart.h"

#include <algorithm>
#include <cmath>

namespace headlight::render {
namespace {

constexpr double kPad = 12.0;
constexpr int kTicks = 4;        // intervals per axis
const QColor kLine{0, 114, 178}; // Okabe–Ito blue

QString tickText(double value) {
    return QString::number(value, 'g', 4);
}

// A range rounded outward to `kTicks` even steps of 1, 2, 2.5 or 5 × 10^k.
std::pair<double, double> niceRange(double low, double high) {
    if (!(high > low)) high = low + 1.0;
    const double step = roundTickStep(high - low, kTicks);
    return {std::floor(low / step) * step, std::floor(low / step) * step + step * kTicks};
}

void paintTicks(QPainter& painter, const LineChartLayout& l) {
    painter.setFont(l.tickFont);
    const double h = fontHeight(l.tickFont);
    for (int i = 0; i <= kTicks; ++i) {
        const double y = l.yLow + (l.yHigh - l.yLow) * i / kTicks;
        const double x = l.xLow + (l.xHigh - l.xLow) * i / kTicks;
        const QPointF atY = lineChartPoint(l, {l.xLow, y}), atX = lineChartPoint(l, {x, l.yLow});
        painter.setPen(QPen(style::kGrid, 1.0));
        painter.drawLine(atY, QPointF(l.plot.right(), atY.y()));
        painter.setPen(style::kInk);
        drawTextLine(painter, lineChartTickLabels(l)[std::size_t(i)], Qt::AlignRight, tickText(y));
        drawTextLine(painter, QRectF(atX.x() - 100.0, l.plot.bottom() + 2.0, 200.0, h),
                     Qt::AlignHCenter, tickText(x));
    }
}
} // namespace

LineChartLayout layoutLineChart(const QRectF& bounds, const LineChartFigure& figure) {
    LineChartLayout l;
    l.titleFont = figureFont(bounds, TextRole::Title);
    l.labelFont = figureFont(bounds, TextRole::Label);
    l.tickFont = figureFont(bounds, TextRole::Tick);
    double xLow = 0.0, xHigh = 1.0, yLow = 0.0, yHigh = 1.0;
    if (!figure.points.empty()) {
        const auto [xMin, xMax] =
            std::minmax_element(figure.points.begin(), figure.points.end(),
                                [](QPointF a, QPointF b) { return a.x() < b.x(); });
        const auto [yMin, yMax] =
            std::minmax_element(figure.points.begin(), figure.points.end(),
                                [](QPointF a, QPointF b) { return a.y() < b.y(); });
        xLow = std::min(0.0, xMin->x()), xHigh = xMax->x();
        yLow = yMin->y() > 0.0 && yMin->y() < 0.5 * yMax->y() ? 0.0 : yMin->y(), yHigh = yMax->y();
    }
    std::tie(l.xLow, l.xHigh) = niceRange(xLow, xHigh);
    std::tie(l.yLow, l.yHigh) = niceRange(yLow, yHigh);
    l.title = QRectF(bounds.left() + kPad, bounds.top() + kPad / 2, bounds.width() - 2 * kPad,
                     lineHeight(l.titleFont, figure.title) + kPad / 2);
    const double band = fontHeight(l.labelFont), tick = fontHeight(l.tickFont);
    double tickWidth = 0.0; // the widest label: "0.25" is wider than the top's "1"
    for (int i = 0; i <= kTicks; ++i)
        tickWidth = std::max(
            tickWidth, textWidth(l.tickFont, tickText(l.yLow + (l.yHigh - l.yLow) * i / kTicks)));
    tickWidth += kLabelGap;
    const double left = bounds.left() + kPad + band + tickWidth + kLabelGap;
    const double top = l.title.bottom() + kPad / 2;
    const double bottom = bounds.bottom() - kPad - band - tick - 4.0;
    l.plot =
        QRectF(left, top, std::max(bounds.right() - kPad - left, 1.0), std::max(bottom - top, 1.0));
    l.yAxisTitle = QRectF(bounds.left() + kPad, l.plot.top(), band, l.plot.height());
    l.xAxisTitle = QRectF(l.plot.left(), l.plot.bottom() + tick + 4.0, l.plot.width(), band);
    return l;
}

QPointF lineChartPoint(const LineChartLayout& l, QPointF value) {
    return {l.plot.left() + (value.x() - l.xLow) / (l.xHigh - l.xLow) * l.plot.width(),
            l.plot.bottom() - (value.y() - l.yLow) / (l.yHigh - l.yLow) * l.plot.height()};
}

std::vector<QRectF> lineChartTickLabels(const LineChartLayout& l) {
    std::vector<QRectF> labels;
    const double h = fontHeight(l.tickFont);
    for (int i = 0; i <= kTicks; ++i) {
        const double y = l.yLow + (l.yHigh - l.yLow) * i / kTicks;
        const double w = textWidth(l.tickFont, tickText(y));
        const QPointF at = lineChartPoint(l, {l.xLow, y});
        labels.emplace_back(l.plot.left() - kLabelGap - w, at.y() - h / 2, w, h);
    }
    return labels;
}

void paintLineChart(QPainter& painter, const QRectF& bounds, const LineChartFigure& figure) {
    painter.save();
    painter.fillRect(bounds, style::kPage);
    const LineChartLayout l = layoutLineChart(bounds, figure);
    paintTitle(painter, l.title, figure.title, l.titleFont);
    paintTicks(painter, l);
    painter.setPen(QPen(style::kInk, 1.0));
    painter.drawLine(l.plot.bottomLeft(), l.plot.bottomRight());
    painter.drawLine(l.plot.bottomLeft(), l.plot.topLeft());
    QPolygonF line;
    for (const QPointF p : figure.points)
        line << lineChartPoint(l, p);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(QPen(kLine, 2.0));
    painter.drawPolyline(line);
    paintAxisTitle(painter, l.yAxisTitle, figure.yAxis, l.labelFont, true);
    paintAxisTitle(painter, l.xAxisTitle, figure.xAxis, l.labelFont, false);
    painter.restore();
}
} // namespace headlight::render
