#include "figures/line_chart.h"

#include <QStringList>
#include <algorithm>
#include <cmath>
#include <iterator>

namespace headlight::render {
namespace {

constexpr double kPad = 12.0;
constexpr int kTicks = 4; // intervals per axis
// Okabe–Ito: blue, vermillion, bluish green, orange, reddish purple, sky blue, yellow.
const QColor kLines[] = {{0, 114, 178},   {213, 94, 0},   {0, 158, 115}, {230, 159, 0},
                         {204, 121, 167}, {86, 180, 233}, {240, 228, 66}};
const QColor kMarker{90, 90, 90};

// Every point of every line, finite ones only.
std::vector<QPointF> allPoints(const LineChartFigure& figure) {
    std::vector<QPointF> all;
    const auto add = [&all](const std::vector<QPointF>& points) {
        for (const QPointF p : points)
            if (std::isfinite(p.x()) && std::isfinite(p.y())) all.push_back(p);
    };
    add(figure.points);
    for (const LineSeries& line : figure.others)
        add(line.points);
    return all;
}

// A line broken where a value is not finite.
void paintLine(QPainter& painter, const LineChartLayout& l, const std::vector<QPointF>& points,
               const QColor& colour) {
    painter.setPen(QPen(colour, 2.0));
    QPolygonF run;
    for (const QPointF p : points) {
        if (std::isfinite(p.x()) && std::isfinite(p.y())) {
            run << lineChartPoint(l, p);
            continue;
        }
        painter.drawPolyline(run);
        run.clear();
    }
    painter.drawPolyline(run);
}

// Each line's name in its colour, one row each at the plot's top right.
void paintLegend(QPainter& painter, const LineChartLayout& l, const LineChartFigure& figure) {
    QStringList names{figure.name};
    for (const LineSeries& line : figure.others)
        names << line.name;
    painter.setFont(l.tickFont);
    const double h = fontHeight(l.tickFont);
    double width = 0.0;
    for (const QString& name : names)
        width = std::max(width, textWidth(l.tickFont, name));
    // Why a backing: the legend sits inside the plot, over the lines it names.
    painter.fillRect(QRectF(l.plot.right() - width - 28.0, l.plot.top() + 2.0, width + 26.0,
                            double(names.size()) * h + 4.0),
                     style::kPage);
    for (qsizetype i = 0; i < names.size(); ++i) {
        const QRectF row(l.plot.right() - width - 24.0, l.plot.top() + 4.0 + double(i) * h,
                         width + 20.0, h);
        painter.setPen(QPen(kLines[std::size_t(i) % std::size(kLines)], 2.0));
        painter.drawLine(QPointF(row.left(), row.center().y()),
                         QPointF(row.left() + 14.0, row.center().y()));
        painter.setPen(style::kInk);
        drawTextLine(painter, row.adjusted(18.0, 0.0, 0.0, 0.0), Qt::AlignLeft, names[i]);
    }
}

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
    const std::vector<QPointF> points = allPoints(figure);
    if (!points.empty()) {
        const auto [xMin, xMax] = std::minmax_element(
            points.begin(), points.end(), [](QPointF a, QPointF b) { return a.x() < b.x(); });
        const auto [yMin, yMax] = std::minmax_element(
            points.begin(), points.end(), [](QPointF a, QPointF b) { return a.y() < b.y(); });
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
    painter.setRenderHint(QPainter::Antialiasing);
    if (figure.marker) {
        painter.setPen(QPen(kMarker, 1.5, Qt::DashLine));
        const double x = lineChartPoint(l, {*figure.marker, l.yLow}).x();
        painter.drawLine(QPointF(x, l.plot.top()), QPointF(x, l.plot.bottom()));
    }
    paintLine(painter, l, figure.points, kLines[0]);
    for (std::size_t i = 0; i < figure.others.size(); ++i)
        paintLine(painter, l, figure.others[i].points, kLines[(i + 1) % std::size(kLines)]);
    if (!figure.others.empty()) paintLegend(painter, l, figure);
    paintAxisTitle(painter, l.yAxisTitle, figure.yAxis, l.labelFont, true);
    paintAxisTitle(painter, l.xAxisTitle, figure.xAxis, l.labelFont, false);
    painter.restore();
}
} // namespace headlight::render
