#include "figures/figure.h"

namespace headlight::render {

void paintFigure(QPainter& painter, const QRectF& bounds, const Figure& figure) {
    struct Painter {
        QPainter& painter;
        const QRectF& bounds;
        void operator()(const EmptyFigure& f) const { paintMessage(painter, bounds, f.message); }
        void operator()(const HeatmapFigure& f) const { paintHeatmap(painter, bounds, f); }
        void operator()(const ModelGridFigure& f) const { paintModelGrid(painter, bounds, f); }
        void operator()(const TokenLinesFigure& f) const { paintTokenLines(painter, bounds, f); }
        void operator()(const ViolinFigure& f) const { paintViolins(painter, bounds, f); }
    };
    std::visit(Painter{painter, bounds}, figure);
}
} // namespace headlight::render
