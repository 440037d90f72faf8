#pragma once
// The token line view: query tokens in a column on the left, key tokens on the right, and a line
// from each query to each key whose width, opacity and colour grow with the attention weight.
// With a query emphasised, its lines stay strong and the others fade.

#include "figures/figure_style.h"

#include <QPainter>
#include <QRectF>
#include <QStringList>
#include <vector>

namespace headlight::render {

struct TokenLinesFigure {
    QString title;
    QStringList tokens;         // [T], the same tokens on both sides
    std::vector<float> weights; // [T · T], query rows × key columns
    ColorBar colorBar;          // the line colour scale (Blues reads on the white page)
    int emphasisedQuery = -1;
    float minShown = 0.02f; // lines below this fraction of the top of the scale are left out
};

struct TokenLinesLayout {
    QRectF title, lines, colorBar;
    double labelWidth = 0.0;
    double slot = 0.0; // vertical pitch of one token
    QFont titleFont, labelFont, tickFont;
};

TokenLinesLayout layoutTokenLines(const QRectF& bounds, const TokenLinesFigure& figure);
QPointF queryAnchor(const TokenLinesLayout& layout, int query); // where query lines start
QPointF keyAnchor(const TokenLinesLayout& layout, int key);     // where key lines end

void paintTokenLines(QPainter& painter, const QRectF& bounds, const TokenLinesFigure& figure);
} // namespace headlight::render
