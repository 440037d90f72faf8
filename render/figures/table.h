#pragma once
// A small table as a panel: a title, a header row and rows of text in columns as wide as their
// widest cell (elided when the panel is narrow), as many rows as the panel has room for and a
// last line saying how many more there are. The output-effect view lists its changed
// predictions with it; as one wrapped note they ran together.

#include <QPainter>
#include <QRectF>
#include <QStringList>
#include <vector>

namespace headlight::render {

struct TableFigure {
    QString title;
    QStringList headers;
    std::vector<QStringList> rows; // each as long as headers
    QString emptyMessage;          // shown instead of the table when there are no rows
};

struct TableLayout {
    QRectF title;
    std::vector<double> columnLeft, columnWidth;
    double rowHeight = 0.0;
    double headerTop = 0.0;
    int shownRows = 0; // the rows that fit; a last line counts the others
    QFont titleFont, headerFont, cellFont;
};

TableLayout layoutTable(const QRectF& bounds, const TableFigure& figure);
void paintTable(QPainter& painter, const QRectF& bounds, const TableFigure& figure);
} // namespace headlight::render
