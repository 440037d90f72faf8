#include "figures/category_grid.h"

#include <algorithm>
#include <array>

namespace headlight::render {
namespace {

constexpr double kPad = 12.0;

const std::array<QColor, 16> kPalette{
    QColor(230, 159, 0),  QColor(86, 180, 233),  QColor(0, 158, 115),   QColor(240, 228, 66),
    QColor(0, 114, 178),  QColor(213, 94, 0),    QColor(204, 121, 167), QColor(0, 0, 0),
    QColor(51, 34, 136),  QColor(136, 204, 238), QColor(68, 170, 153),  QColor(17, 119, 51),
    QColor(153, 153, 51), QColor(221, 204, 119), QColor(204, 102, 119), QColor(136, 34, 85)};

struct Layout {
    QRectF title, plot, legend, rowAxisTitle, colAxisTitle;
    double rowLabelWidth = 0.0, colLabelHeight = 0.0;
    QFont titleFont, labelFont, tickFont;
};

QString legendEntry(const CategoryGridFigure& f, int category) {
    return f.legendLabels.size() == f.categoryCount
               ? f.legendLabels[category]
               : QStringLiteral("%1 %2").arg(f.legendTitle).arg(category);
}

double legendWidth(const CategoryGridFigure& f, const QFont& font) {
    double widest =
        textWidth(font, QStringLiteral("%1 %2").arg(f.legendTitle).arg(f.categoryCount));
    for (const QString& label : f.legendLabels)
        widest = std::max(widest, textWidth(font, label));
    return widest + fontHeight(font) + 3 * kLabelGap;
}

Layout layoutGrid(const QRectF& bounds, const CategoryGridFigure& f) {
    Layout l;
    l.titleFont = figureFont(bounds, TextRole::Title);
    l.labelFont = figureFont(bounds, TextRole::Label);
    l.tickFont = figureFont(bounds, TextRole::Tick);
    l.title = QRectF(bounds.left() + kPad, bounds.top() + kPad / 2, bounds.width() - 2 * kPad,
                     lineHeight(l.titleFont, f.title) + kPad / 2);
    const double axisBand = fontHeight(l.labelFont);
    l.rowLabelWidth = widestText(l.labelFont, f.rowLabels);
    const double left = bounds.left() + kPad + axisBand + l.rowLabelWidth + kLabelGap;
    const double right = bounds.right() - kPad - legendWidth(f, l.tickFont);
    QRectF plot(left, l.title.bottom() + kPad / 2, std::max(right - left, 1.0), 1.0);
    const bool rotated = columnLabelsRotate(plot, f.colLabels, l.labelFont);
    l.colLabelHeight = f.colLabels.isEmpty() ? 0.0
                                             : columnLabelsHeight(f.colLabels, l.labelFont, rotated,
                                                                  0.22 * bounds.height());
    const double bottom = bounds.bottom() - kPad - axisBand - l.colLabelHeight;
    // Rows no taller than three text lines: a strip reads as a strip, not as a wall of colour.
    const double rowHeight =
        std::min((bottom - plot.top()) / std::max(f.rows, 1), 3.0 * fontHeight(l.tickFont));
    plot.setHeight(std::max(rowHeight * f.rows, 1.0));
    l.plot = plot;
    l.legend = QRectF(plot.right() + kLabelGap, plot.top(), legendWidth(f, l.tickFont),
                      bounds.bottom() - plot.top());
    l.rowAxisTitle = QRectF(bounds.left() + kPad, plot.top(), axisBand, plot.height());
    l.colAxisTitle = QRectF(plot.left(), plot.bottom() + l.colLabelHeight, plot.width(), axisBand);
    return l;
}

QRectF cellRect(const Layout& l, const CategoryGridFigure& f, int row, int col) {
    const double w = l.plot.width() / std::max(f.cols, 1);
    const double h = l.plot.height() / std::max(f.rows, 1);
    return QRectF(l.plot.left() + col * w, l.plot.top() + row * h, w, h);
}

void paintCells(QPainter& painter, const Layout& l, const CategoryGridFigure& f) {
    const bool withText = f.cellText.size() == qsizetype(f.categories.size());
    painter.setFont(l.tickFont);
    for (int r = 0; r < f.rows; ++r)
        for (int c = 0; c < f.cols; ++c) {
            const std::size_t at = std::size_t(r) * std::size_t(f.cols) + std::size_t(c);
            const int category = f.categories[at];
            if (category < 0) continue;
            const QRectF cell = cellRect(l, f, r, c);
            const QColor fill = categoryColor(category);
            painter.fillRect(cell, fill);
            painter.setPen(QPen(style::kPage, 1.0));
            painter.drawLine(cell.topRight(), cell.bottomRight());
            if (!withText) continue;
            const QString text = f.cellText[qsizetype(at)];
            if (textWidth(l.tickFont, text) > cell.width() - 2.0) continue;
            painter.setPen(fill.lightnessF() > 0.5 ? style::kInk : QColor(Qt::white));
            drawTextLine(painter, cell, Qt::AlignHCenter, text);
        }
}

void paintLegend(QPainter& painter, const Layout& l, const CategoryGridFigure& f) {
    painter.setFont(l.tickFont);
    const double h = fontHeight(l.tickFont);
    for (int k = 0; k < f.categoryCount; ++k) {
        const double y = l.legend.top() + k * (h + 4.0);
        if (y + h > l.legend.bottom()) break;
        painter.fillRect(QRectF(l.legend.left(), y, h, h), categoryColor(k));
        painter.setPen(style::kInk);
        drawTextLine(painter, QRectF(l.legend.left() + h + kLabelGap, y, l.legend.width(), h),
                     Qt::AlignLeft, legendEntry(f, k));
    }
}
} // namespace

QColor categoryColor(int category) {
    return kPalette[std::size_t(category) % kPalette.size()];
}

void paintCategoryGrid(QPainter& painter, const QRectF& bounds, const CategoryGridFigure& f) {
    painter.save();
    painter.fillRect(bounds, style::kPage);
    const Layout l = layoutGrid(bounds, f);
    paintTitle(painter, l.title, f.title, l.titleFont);
    if (f.rows > 0 && f.cols > 0 &&
        f.categories.size() == std::size_t(f.rows) * std::size_t(f.cols)) {
        paintCells(painter, l, f);
        painter.setPen(QPen(style::kInk, 1.0));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(l.plot);
        paintRowLabels(painter, l.plot, l.rowLabelWidth, f.rowLabels, -1, l.labelFont);
        paintColumnLabels(painter, l.plot, l.colLabelHeight, f.colLabels, -1, l.labelFont);
        paintAxisTitle(painter, l.rowAxisTitle, f.rowAxis, l.labelFont, true);
        paintAxisTitle(painter, l.colAxisTitle, f.colAxis, l.labelFont, false);
        paintLegend(painter, l, f);
    }
    painter.restore();
}
} // namespace headlight::render
