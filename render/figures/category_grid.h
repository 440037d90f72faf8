#pragma once
// A grid of categorical cells: one colour per category from a colour-blind-safe palette, with
// text in each cell when it fits and a legend of the categories. The LSH view draws each head's
// bucket per token with it (one row per head, tokens in original or in bucket-sorted order).

#include "figures/figure_style.h"

#include <QPainter>
#include <QRectF>
#include <QStringList>
#include <vector>

namespace headlight::render {

struct CategoryGridFigure {
    QString title;
    int rows = 0;
    int cols = 0;
    std::vector<int> categories; // [rows · cols], row-major; negative = blank
    QStringList cellText;        // [rows · cols] or empty: printed in the cells when they fit
    QStringList rowLabels;       // [rows]
    QStringList colLabels;       // [cols] or empty
    QString rowAxis, colAxis;
    QString legendTitle;   // e.g. "Bucket"
    int categoryCount = 0; // legend entries 0 .. categoryCount − 1
    QStringList legendLabels; // [categoryCount] names of the entries, or empty: "Bucket 0", …
};

// Okabe–Ito's eight colours, then Paul Tol's muted set: distinct for colour-blind readers; a
// category past the sixteenth reuses the palette.
QColor categoryColor(int category);

void paintCategoryGrid(QPainter& painter, const QRectF& bounds, const CategoryGridFigure& figure);
} // namespace headlight::render
