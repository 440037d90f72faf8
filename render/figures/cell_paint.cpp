#include "figures/cell_paint.h"

#include <QPaintEngine>
#include <algorithm>

namespace headlight::render {
namespace {

void paintRects(QPainter& painter, const QRectF& area, const QImage& cells) {
    const double w = area.width() / cells.width();
    const double h = area.height() / cells.height();
    // Why the overlap: PDF and SVG viewers antialias each rectangle on its own, so abutting cells
    // show hairline seams of the page colour; each cell reaches a little under its right and
    // lower neighbours, which are drawn over it.
    const double overlap = 0.1 * std::min(w, h);
    for (int r = 0; r < cells.height(); ++r)
        for (int c = 0; c < cells.width(); ++c) {
            const double right = c + 1 < cells.width() ? overlap : 0.0;
            const double below = r + 1 < cells.height() ? overlap : 0.0;
            painter.fillRect(QRectF(area.left() + c * w, area.top() + r * h, w + right, h + below),
                             QColor(cells.pixel(c, r)));
        }
}
} // namespace

bool drawsCellsAsRects(const QPainter& painter, std::size_t figureCells) {
    const QPaintEngine* engine = painter.paintEngine();
    const bool vector =
        engine && (engine->type() == QPaintEngine::SVG || engine->type() == QPaintEngine::Pdf);
    return vector && figureCells <= kMaxVectorCells;
}

void paintCells(QPainter& painter, const QRectF& area, const QImage& cells,
                std::size_t figureCells) {
    if (cells.isNull()) return;
    if (drawsCellsAsRects(painter, figureCells))
        paintRects(painter, area, cells);
    else
        painter.drawImage(area, cells);
}
} // namespace headlight::render
