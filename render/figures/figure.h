#pragma once
// Any figure Headlight draws, as one value: the screen, and PNG/SVG/PDF export, paint whichever
// figure a view holds through paintFigure. An empty figure paints a centred message instead.

#include "figures/heatmap.h"
#include "figures/model_grid.h"
#include "figures/token_lines.h"
#include "figures/violins.h"

#include <QPainter>
#include <QRectF>
#include <variant>

namespace headlight::render {

struct EmptyFigure {
    QString message;
};

using Figure =
    std::variant<EmptyFigure, HeatmapFigure, ModelGridFigure, TokenLinesFigure, ViolinFigure>;

void paintFigure(QPainter& painter, const QRectF& bounds, const Figure& figure);
} // namespace headlight::render
