#include "figures/scatter.h"

#include "figures/category_grid.h"

#include <QFontMetricsF>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

namespace headlight::render {
namespace {

constexpr double kPad = 12.0;
constexpr double kMargin = 0.06; // of the data span, around the points

double markerRadius(const QRectF& plot) {
    return std::clamp(std::min(plot.width(), plot.height()) / 90.0, 1.6, 5.5);
}

// The data's range grown so that one unit is as long on both axes of `plot`.
void fitRange(ScatterLayout& l, const std::vector<ScatterPoint>& points) {
    double x0 = 0.0, x1 = 0.0, y0 = 0.0, y1 = 0.0;
    bool any = false;
    for (const ScatterPoint& p : points) {
        if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
        x0 = any ? std::min(x0, p.x) : p.x, x1 = any ? std::max(x1, p.x) : p.x;
        y0 = any ? std::min(y0, p.y) : p.y, y1 = any ? std::max(y1, p.y) : p.y;
        any = true;
    }
    const double span = std::max({x1 - x0, y1 - y0, 1e-9}) * (1.0 + 2.0 * kMargin);
    const double perPixel =
        std::max(span / std::max(l.plot.width(), 1.0), span / std::max(l.plot.height(), 1.0));
    const double cx = 0.5 * (x0 + x1), cy = 0.5 * (y0 + y1);
    l.xLow = cx - 0.5 * perPixel * l.plot.width(), l.xHigh = cx + 0.5 * perPixel * l.plot.width();
    l.yLow = cy - 0.5 * perPixel * l.plot.height(), l.yHigh = cy + 0.5 * perPixel * l.plot.height();
}

QString tickText(double value, double step) {
    return QString::number(std::abs(value) < step * 1e-6 ? 0.0 : value, 'g', 4);
}

void paintTicks(QPainter& painter, const ScatterLayout& l) {
    painter.setFont(l.tickFont);
    const double h = fontHeight(l.tickFont);
    const double xStep = roundTickStep(l.xHigh - l.xLow, 5);
    const double yStep = roundTickStep(l.yHigh - l.yLow, 5);
    for (const double x : roundTicks(l.xLow, l.xHigh, 5)) {
        const double px = scatterPosition(l, x, l.yLow).x();
        painter.setPen(QPen(style::kGrid, 1.0));
        painter.drawLine(QPointF(px, l.plot.top()), QPointF(px, l.plot.bottom()));
        painter.setPen(style::kInk);
        drawTextLine(painter, QRectF(px - 60.0, l.plot.bottom() + 2.0, 120.0, h), Qt::AlignHCenter,
                     tickText(x, xStep));
    }
    for (const double y : roundTicks(l.yLow, l.yHigh, 5)) {
        const double py = scatterPosition(l, l.xLow, y).y();
        painter.setPen(QPen(style::kGrid, 1.0));
        painter.drawLine(QPointF(l.plot.left(), py), QPointF(l.plot.right(), py));
        painter.setPen(style::kInk);
        drawTextLine(painter, QRectF(l.plot.left() - 120.0 - kLabelGap, py - h / 2, 120.0, h),
                     Qt::AlignRight, tickText(y, yStep));
    }
}

void paintMarker(QPainter& painter, QPointF at, double r, bool key) {
    if (!key) {
        painter.drawEllipse(at, r, r);
        return;
    }
    const double s = 1.25 * r;
    painter.drawPolygon(QPolygonF{QPointF(at.x(), at.y() - s),
                                  QPointF(at.x() + s, at.y() + 0.8 * s),
                                  QPointF(at.x() - s, at.y() + 0.8 * s)});
}

void paintPoints(QPainter& painter, const ScatterLayout& l, const ScatterFigure& f, double r) {
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setClipRect(l.plot.adjusted(-r, -r, r, r));
    for (const ScatterPoint& p : f.points) {
        if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
        painter.setPen(QPen(style::kInk.lighter(150), 0.6));
        painter.setBrush(scatterColor(f, p));
        paintMarker(painter, scatterPosition(l, p.x, p.y), r, p.key);
    }
    painter.setBrush(Qt::NoBrush);
    for (const ScatterPoint& p : f.points)
        if (p.token == f.emphasisedToken && std::isfinite(p.x) && std::isfinite(p.y)) {
            painter.setPen(QPen(style::kAccent, 2.0));
            painter.drawEllipse(scatterPosition(l, p.x, p.y), 2.4 * r, 2.4 * r);
        }
    painter.setClipping(false);
}

double legendWidth(const QStringList& categories, const QFont& font) {
    const QStringList entries = categories + QStringList{QStringLiteral("query (●)")};
    return widestText(font, entries) + fontHeight(font) + 3 * kLabelGap;
}

// Marker shapes, then the categories' colours or the colour bar, top-down in `area`.
void paintLegend(QPainter& painter, const QRectF& area, const ColorBar& bar,
                 const QStringList& categories, const QFont& font) {
    const double h = fontHeight(font) * 1.3, r = fontHeight(font) * 0.3;
    painter.setFont(font);
    painter.setRenderHint(QPainter::Antialiasing);
    double y = area.top();
    const auto entry = [&](const QString& text, const QColor& fill, bool key) {
        painter.setPen(QPen(style::kInk, 0.6));
        painter.setBrush(fill);
        paintMarker(painter, QPointF(area.left() + r + 2.0, y + h / 2), r, key);
        painter.setPen(style::kInk);
        drawTextLine(painter, QRectF(area.left() + 2 * r + 2 * kLabelGap, y, area.width(), h),
                     Qt::AlignLeft, text);
        y += h;
    };
    entry(QStringLiteral("query"), style::kPage, false);
    entry(QStringLiteral("key"), style::kPage, true);
    y += h / 2;
    for (int c = 0; c < categories.size(); ++c)
        entry(categories[c], categoryColor(c), false);
    painter.setBrush(Qt::NoBrush);
    if (!categories.isEmpty() || bar.label.isEmpty()) return;
    paintColorBar(painter, QRectF(area.left(), y, area.width(), area.bottom() - y), bar, font);
}
} // namespace

ScatterLayout layoutScatter(const QRectF& bounds, const ScatterFigure& f) {
    ScatterLayout l;
    l.titleFont = figureFont(bounds, TextRole::Title);
    l.labelFont = figureFont(bounds, TextRole::Label);
    l.tickFont = figureFont(bounds, TextRole::Tick);
    l.title = QRectF(bounds.left() + kPad, bounds.top() + kPad / 2, bounds.width() - 2 * kPad,
                     lineHeight(l.titleFont, f.title) + kPad / 2);
    const double band = fontHeight(l.labelFont), tick = fontHeight(l.tickFont);
    const QStringList legendEntries = f.byCategory ? f.categories : QStringList();
    const double legend = std::max(legendWidth(legendEntries, l.tickFont),
                                   f.byCategory ? 0.0 : colorBarWidth(l.tickFont));
    const double left = bounds.left() + kPad + band + textWidth(l.tickFont, "−0.000") + kLabelGap;
    const double right = bounds.right() - kPad - legend - kLabelGap;
    const double top = l.title.bottom() + kPad / 2;
    const double bottom = bounds.bottom() - kPad - band - tick - 4.0;
    // Square: both axes share one scale, and a square shows the two components alike.
    const double side = std::max(std::min(right - left, bottom - top), 1.0);
    l.plot = QRectF(left, top, side, side);
    l.legend = QRectF(l.plot.right() + kLabelGap, top, legend, l.plot.height());
    l.yAxisTitle = QRectF(bounds.left() + kPad, l.plot.top(), band, l.plot.height());
    l.xAxisTitle = QRectF(l.plot.left(), l.plot.bottom() + tick + 4.0, l.plot.width(), band);
    fitRange(l, f.points);
    return l;
}

QPointF scatterPosition(const ScatterLayout& l, double x, double y) {
    return {l.plot.left() + (x - l.xLow) / (l.xHigh - l.xLow) * l.plot.width(),
            l.plot.bottom() - (y - l.yLow) / (l.yHigh - l.yLow) * l.plot.height()};
}

std::optional<std::size_t> scatterPointAt(const ScatterLayout& l, const ScatterFigure& f,
                                          QPointF at) {
    const double reach = 2.0 * markerRadius(l.plot) + 2.0;
    std::optional<std::size_t> nearest;
    double best = reach * reach;
    for (std::size_t i = 0; i < f.points.size(); ++i) {
        const ScatterPoint& p = f.points[i];
        if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
        const QPointF d = scatterPosition(l, p.x, p.y) - at;
        const double distance = QPointF::dotProduct(d, d);
        if (distance <= best) best = distance, nearest = i;
    }
    return nearest;
}

QColor scatterColor(const ScatterFigure& f, const ScatterPoint& p) {
    if (f.byCategory) return p.category < 0 ? style::kGrid : categoryColor(p.category);
    return colorAt(f.colorBar.map, normalise(p.value, f.colorBar.low, f.colorBar.high));
}

void paintScatter(QPainter& painter, const QRectF& bounds, const ScatterFigure& f) {
    painter.save();
    painter.fillRect(bounds, style::kPage);
    const ScatterLayout l = layoutScatter(bounds, f);
    paintTitle(painter, l.title, f.title, l.titleFont);
    paintTicks(painter, l);
    painter.setPen(QPen(style::kInk, 1.0));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(l.plot);
    paintPoints(painter, l, f, markerRadius(l.plot));
    paintLegend(painter, l.legend, f.colorBar, f.byCategory ? f.categories : QStringList(),
                l.tickFont);
    paintAxisTitle(painter, l.yAxisTitle, f.yAxis, l.labelFont, true);
    paintAxisTitle(painter, l.xAxisTitle, f.xAxis, l.labelFont, false);
    painter.restore();
}

ScatterGridLayout layoutScatterGrid(const QRectF& bounds, const ScatterGridFigure& f) {
    ScatterGridLayout l;
    l.titleFont = figureFont(bounds, TextRole::Title);
    l.labelFont = figureFont(bounds, TextRole::Label);
    l.tickFont = figureFont(bounds, TextRole::Tick);
    l.title = QRectF(bounds.left() + kPad, bounds.top() + kPad / 2, bounds.width() - 2 * kPad,
                     lineHeight(l.titleFont, f.title) + kPad / 2);
    const double legend = std::max(legendWidth(f.categories, l.tickFont),
                                   f.categories.isEmpty() ? colorBarWidth(l.tickFont) : 0.0);
    l.rowLabelWidth = widestText(l.tickFont, f.rowLabels) + kLabelGap;
    const double colBand = f.colLabels.isEmpty() ? 0.0 : fontHeight(l.tickFont) + 2.0;
    const double left = bounds.left() + kPad + l.rowLabelWidth;
    const double top = l.title.bottom() + kPad / 2 + colBand;
    const double width = bounds.right() - kPad - legend - kLabelGap - left;
    const double height = bounds.bottom() - kPad - top;
    const int rows = std::max(f.rows, 1), cols = std::max(f.cols, 1);
    const double side = std::max(std::min(width / cols, height / rows), 1.0);
    l.grid = QRectF(left, top, side * cols, side * rows);
    l.legend = QRectF(l.grid.right() + kLabelGap, l.title.bottom() + kPad / 2, legend,
                      std::max(l.grid.height() + colBand, 8.0 * fontHeight(l.tickFont)));
    for (int r = 0; r < f.rows; ++r)
        for (int c = 0; c < f.cols; ++c)
            l.cells.emplace_back(left + c * side, top + r * side, side, side);
    return l;
}

std::optional<int> scatterGridCellAt(const ScatterGridLayout& l, QPointF at) {
    for (std::size_t i = 0; i < l.cells.size(); ++i)
        if (l.cells[i].contains(at)) return int(i);
    return std::nullopt;
}

void paintScatterGrid(QPainter& painter, const QRectF& bounds, const ScatterGridFigure& f) {
    painter.save();
    painter.fillRect(bounds, style::kPage);
    const ScatterGridLayout l = layoutScatterGrid(bounds, f);
    paintTitle(painter, l.title, f.title, l.titleFont);
    painter.setFont(l.tickFont);
    const double h = fontHeight(l.tickFont);
    for (std::size_t i = 0; i < l.cells.size() && i < f.cells.size(); ++i) {
        const QRectF cell = l.cells[i].adjusted(1.5, 1.5, -1.5, -1.5);
        ScatterLayout small;
        small.plot = cell.adjusted(3.0, h + 2.0, -3.0, -3.0);
        fitRange(small, f.cells[i].points);
        paintPoints(painter, small, f.cells[i], std::clamp(cell.width() / 45.0, 1.0, 2.5));
        painter.setPen(QPen(int(i) == f.selected ? style::kAccent : style::kGrid,
                            int(i) == f.selected ? 2.5 : 1.0));
        painter.drawRect(cell);
        // Why whole or not at all: in a grid of many heads "L15 …" names nothing; the read-out
        // under the pointer gives the title.
        if (QFontMetricsF(l.tickFont).horizontalAdvance(f.cells[i].title) > cell.width() - 6.0)
            continue;
        painter.setPen(style::kMutedInk);
        drawTextLine(painter, QRectF(cell.left() + 3.0, cell.top() + 1.0, cell.width() - 6.0, h),
                     Qt::AlignLeft, f.cells[i].title);
    }
    painter.setPen(style::kInk);
    const int cols = std::max(f.cols, 1);
    for (int r = 0; r < f.rows && r < f.rowLabels.size(); ++r) {
        const QRectF cell = l.cells[std::size_t(r * cols)];
        drawTextLine(painter,
                     QRectF(cell.left() - l.rowLabelWidth, cell.top(), l.rowLabelWidth - kLabelGap,
                            cell.height()),
                     Qt::AlignRight, f.rowLabels[r]);
    }
    for (int c = 0; c < f.cols && c < f.colLabels.size() && !l.cells.empty(); ++c) {
        const QRectF cell = l.cells[std::size_t(c)];
        drawTextLine(painter, QRectF(cell.left(), cell.top() - h - 2.0, cell.width(), h),
                     Qt::AlignHCenter, f.colLabels[c]);
    }
    paintLegend(painter, l.legend, f.colorBar, f.categories, l.tickFont);
    painter.restore();
}
} // namespace headlight::render
