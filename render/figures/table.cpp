#include "figures/table.h"

#include "figures/figure_style.h"

#include <algorithm>

namespace headlight::render {
namespace {

constexpr double kTablePad = 12.0;
constexpr double kCellPad = 10.0; // between columns

QString moreRows(int count) {
    return count == 1 ? QStringLiteral("and 1 more row")
                      : QStringLiteral("and %1 more rows").arg(count);
}

// Column widths from the widest cell, shrunk in proportion when they do not fit `width`.
void fitColumns(TableLayout& l, const TableFigure& f, double left, double width) {
    std::vector<double> widths;
    for (qsizetype c = 0; c < f.headers.size(); ++c) {
        double widest = textWidth(l.headerFont, f.headers[c]);
        for (const QStringList& row : f.rows)
            widest = std::max(widest, textWidth(l.cellFont, row.value(c)));
        widths.push_back(widest + kCellPad);
    }
    double total = 0.0;
    for (const double w : widths)
        total += w;
    const double scale = total > width ? width / total : 1.0;
    double x = left;
    for (const double w : widths) {
        l.columnLeft.push_back(x);
        l.columnWidth.push_back(w * scale);
        x += w * scale;
    }
}

void paintRow(QPainter& painter, const TableLayout& l, double top, const QStringList& cells,
              const QFont& font) {
    painter.setFont(font);
    for (std::size_t c = 0; c < l.columnLeft.size(); ++c) {
        const double width = l.columnWidth[c] - kCellPad;
        drawTextLine(painter, QRectF(l.columnLeft[c], top, width, l.rowHeight), Qt::AlignLeft,
                     elided(cells.value(qsizetype(c)), font, width));
    }
}
} // namespace

TableLayout layoutTable(const QRectF& bounds, const TableFigure& f) {
    TableLayout l;
    l.titleFont = figureFont(bounds, TextRole::Label);
    l.titleFont.setBold(true);
    l.headerFont = figureFont(bounds, TextRole::Tick);
    l.headerFont.setBold(true);
    l.cellFont = figureFont(bounds, TextRole::Tick);
    const QRectF area = bounds.adjusted(kTablePad, kTablePad / 2, -kTablePad, -kTablePad / 2);
    l.title = QRectF(area.left(), area.top(), area.width(), fontHeight(l.titleFont) + 4.0);
    l.rowHeight = fontHeight(l.cellFont) * 1.35;
    l.headerTop = l.title.bottom() + 4.0;
    fitColumns(l, f, area.left(), area.width());
    const double room = area.bottom() - (l.headerTop + l.rowHeight);
    const int fit = std::max(0, int(room / l.rowHeight));
    const int rows = int(f.rows.size());
    l.shownRows = rows <= fit ? rows : std::max(0, fit - 1); // the last line counts the rest
    return l;
}

void paintTable(QPainter& painter, const QRectF& bounds, const TableFigure& f) {
    painter.save();
    painter.fillRect(bounds, style::kPage);
    if (f.rows.empty()) {
        paintMessage(painter, bounds, f.emptyMessage);
        painter.restore();
        return;
    }
    const TableLayout l = layoutTable(bounds, f);
    paintTitle(painter, l.title, f.title, l.titleFont);
    painter.setPen(style::kInk);
    paintRow(painter, l, l.headerTop, f.headers, l.headerFont);
    const double left = l.columnLeft.front();
    const double right = l.columnLeft.back() + l.columnWidth.back();
    double top = l.headerTop + l.rowHeight;
    painter.setPen(QPen(style::kMutedInk, 1.0));
    painter.drawLine(QPointF(left, top), QPointF(right, top));
    for (int r = 0; r < l.shownRows; ++r, top += l.rowHeight) {
        if (r % 2 == 1)
            painter.fillRect(QRectF(left, top, right - left, l.rowHeight), style::kGrid);
        painter.setPen(style::kInk);
        paintRow(painter, l, top, f.rows[std::size_t(r)], l.cellFont);
    }
    if (l.shownRows < int(f.rows.size())) {
        painter.setPen(style::kMutedInk);
        painter.setFont(l.cellFont);
        drawTextLine(painter, QRectF(left, top, right - left, l.rowHeight), Qt::AlignLeft,
                     moreRows(int(f.rows.size()) - l.shownRows));
    }
    painter.restore();
}
} // namespace headlight::render
