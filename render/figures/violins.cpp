#include "figures/violins.h"

#include <QPainterPath>
#include <algorithm>
#include <cmath>

namespace headlight::render {
namespace {

constexpr double kPad = 12.0;
constexpr double kPanelGap = 18.0;

int columnsFor(const QRectF& bounds, std::size_t panels) {
    if (panels <= 1) return 1;
    const double aspect = bounds.width() / std::max(bounds.height(), 1.0);
    const int columns = int(std::ceil(std::sqrt(double(panels) * aspect / 1.2)));
    return std::clamp(columns, 1, int(panels));
}

void paintValueGrid(QPainter& painter, const QRectF& plot, const ViolinFigure& figure,
                    const QFont& tickFont, bool withLabels) {
    painter.setFont(tickFont);
    const double h = fontHeight(tickFont);
    for (const double v : roundTicks(figure.minValue, figure.maxValue, 5)) {
        const double y = violinValueY(plot, figure, v);
        painter.setPen(QPen(style::kGrid, 1.0));
        painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
        if (!withLabels) continue;
        painter.setPen(style::kInk);
        drawTextLine(painter, QRectF(plot.left() - 80.0 - kLabelGap, y - h / 2, 80.0, h),
                     Qt::AlignRight, QString::number(v, 'g', 3));
    }
    painter.setPen(QPen(style::kMutedInk, 1.2, Qt::DashLine));
    for (double t : {figure.thresholds.low, figure.thresholds.high})
        if (t > figure.minValue && t < figure.maxValue) {
            const double y = violinValueY(plot, figure, t);
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
        }
}

// The density outline mirrored about the violin's centre line, width scaled to its own maximum.
QPainterPath violinPath(const QRectF& plot, const ViolinFigure& figure, const ViolinShape& shape,
                        double centerX, double halfWidth) {
    const float peak = *std::max_element(shape.density.begin(), shape.density.end());
    QPainterPath path;
    if (!(peak > 0.0f)) return path;
    std::vector<QPointF> right;
    for (std::size_t i = 0; i < figure.grid.size(); ++i) {
        if (figure.grid[i] < figure.minValue || figure.grid[i] > figure.maxValue) continue;
        right.emplace_back(centerX + halfWidth * shape.density[i] / peak,
                           violinValueY(plot, figure, figure.grid[i]));
    }
    if (right.empty()) return path;
    path.moveTo(right.front());
    for (const QPointF& p : right)
        path.lineTo(p);
    for (auto it = right.rbegin(); it != right.rend(); ++it)
        path.lineTo(2 * centerX - it->x(), it->y());
    path.closeSubpath();
    return path;
}

void paintViolin(QPainter& painter, const QRectF& plot, const ViolinFigure& figure,
                 const ViolinShape& shape, double centerX, double halfWidth, bool selected) {
    if (shape.density.size() != figure.grid.size() || shape.density.empty()) return;
    const QPainterPath path = violinPath(plot, figure, shape, centerX, halfWidth);
    painter.setBrush(thresholdColor(shape.median, figure.thresholds));
    painter.setPen(QPen(selected ? style::kAccent : style::kInk, selected ? 3.0 : 0.8));
    painter.drawPath(path);
    painter.setPen(
        QPen(style::kInk, std::clamp(halfWidth / 4, 1.5, 4.0), Qt::SolidLine, Qt::FlatCap));
    painter.drawLine(QPointF(centerX, violinValueY(plot, figure, shape.q1)),
                     QPointF(centerX, violinValueY(plot, figure, shape.q3)));
    painter.setBrush(Qt::white);
    painter.setPen(QPen(style::kInk, 1.0));
    const double r = std::clamp(halfWidth / 5, 2.0, 4.5);
    painter.drawEllipse(QPointF(centerX, violinValueY(plot, figure, shape.median)), r, r);
}

void paintPanel(QPainter& painter, const QRectF& plot, const ViolinFigure& figure,
                const ViolinPanel& panel, const ViolinLayout& layout, bool firstColumn) {
    paintValueGrid(painter, plot, figure, layout.tickFont, firstColumn);
    const double h = fontHeight(layout.labelFont);
    painter.setFont(layout.labelFont);
    painter.setPen(panel.layer == figure.selectedLayer ? style::kAccent : style::kInk);
    drawTextLine(painter, QRectF(plot.left(), plot.top() - h - 2.0, plot.width(), h), Qt::AlignLeft,
                 panel.title);
    const int n = int(panel.violins.size());
    if (n == 0) return;
    const double slot = plot.width() / n;
    painter.setRenderHint(QPainter::Antialiasing, true);
    for (int i = 0; i < n; ++i) {
        const ViolinShape& shape = panel.violins[std::size_t(i)];
        paintViolin(painter, plot, figure, shape, violinCenterX(plot, panel, i),
                    std::min(0.45 * slot, 70.0),
                    panel.layer == figure.selectedLayer && shape.head == figure.selectedHead);
    }
    painter.setFont(layout.tickFont);
    const double th = fontHeight(layout.tickFont);
    const int step = labelStep(slot, textWidth(layout.tickFont, QStringLiteral("H00")));
    for (int i = 0; i < n; i += step) {
        painter.setPen(style::kInk);
        drawTextLine(painter,
                     QRectF(violinCenterX(plot, panel, i) - slot * step / 2, plot.bottom() + 2.0,
                            slot * step, th),
                     Qt::AlignHCenter,
                     QStringLiteral("H%1").arg(panel.violins[std::size_t(i)].head));
    }
    painter.setPen(QPen(style::kInk, 1.0));
    painter.setBrush(Qt::NoBrush);
    painter.drawLine(plot.bottomLeft(), plot.bottomRight());
    painter.drawLine(plot.bottomLeft(), plot.topLeft());
}
} // namespace

Thresholds realFormerColors(double low, double high) {
    return {low, high, {QColor(0, 114, 178), QColor(240, 228, 66), QColor(213, 94, 0)}};
}

ViolinLayout layoutViolins(const QRectF& bounds, const ViolinFigure& figure) {
    ViolinLayout layout;
    layout.titleFont = figureFont(bounds, TextRole::Title);
    layout.labelFont = figureFont(bounds, TextRole::Label);
    layout.tickFont = figureFont(bounds, TextRole::Tick);
    layout.title = QRectF(bounds.left() + kPad, bounds.top() + kPad / 2, bounds.width() - 2 * kPad,
                          lineHeight(layout.titleFont, figure.title) + kPad / 2);
    const std::size_t n = figure.panels.size();
    if (n == 0) return layout;
    layout.columns = columnsFor(bounds, n);
    const int rows = int((n + std::size_t(layout.columns) - 1) / std::size_t(layout.columns));
    const double axisBand = fontHeight(layout.labelFont);
    const double left =
        bounds.left() + kPad + axisBand + textWidth(layout.tickFont, "0.000") + kLabelGap;
    const double right = bounds.right() - kPad - colorBarWidth(layout.tickFont);
    const double top = layout.title.bottom() + kPad / 2;
    const double cellW = (right - left) / layout.columns;
    const double cellH = (bounds.bottom() - kPad - top) / rows;
    const double titleBand = fontHeight(layout.labelFont) + 4.0;
    const double headBand = fontHeight(layout.tickFont) + 4.0;
    for (std::size_t i = 0; i < n; ++i) {
        const int c = int(i) % layout.columns;
        const int r = int(i) / layout.columns;
        layout.panels.emplace_back(left + c * cellW, top + r * cellH + titleBand, cellW - kPanelGap,
                                   std::max(cellH - titleBand - headBand - kPanelGap / 2, 1.0));
    }
    const QRectF& first = layout.panels.front();
    layout.colorBar = QRectF(right, first.top(), colorBarWidth(layout.tickFont), first.height());
    return layout;
}

double violinValueY(const QRectF& plot, const ViolinFigure& figure, double value) {
    return plot.bottom() - normalise(value, figure.minValue, figure.maxValue) * plot.height();
}

double violinCenterX(const QRectF& plot, const ViolinPanel& panel, int index) {
    const double slot = plot.width() / std::max<std::size_t>(panel.violins.size(), 1);
    return plot.left() + (index + 0.5) * slot;
}

void paintViolins(QPainter& painter, const QRectF& bounds, const ViolinFigure& figure) {
    painter.save();
    painter.fillRect(bounds, style::kPage);
    const ViolinLayout layout = layoutViolins(bounds, figure);
    paintTitle(painter, layout.title, figure.title, layout.titleFont);
    for (std::size_t i = 0; i < layout.panels.size(); ++i)
        paintPanel(painter, layout.panels[i], figure, figure.panels[i], layout,
                   int(i) % layout.columns == 0);
    if (!layout.panels.empty()) {
        const QRectF axis(bounds.left() + kPad, layout.panels.front().top(),
                          fontHeight(layout.labelFont), layout.panels.front().height());
        paintAxisTitle(painter, axis, figure.valueAxis, layout.labelFont, true);
        paintThresholdBar(painter, layout.colorBar, figure.thresholds, figure.minValue,
                          figure.maxValue, figure.valueAxis, layout.tickFont);
    }
    painter.restore();
}
} // namespace headlight::render
