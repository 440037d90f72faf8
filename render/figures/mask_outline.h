#pragma once
// The outline of an atlas mask overlay (core/analysis/atlas_mask_overlay.h's shapes, as polygons
// in token coordinates: x a key position, y a query position) over a map's cells. `cells` is the
// rectangle the tiles fill (HeatmapLayout::plot) and `extent` the tokens it spans (the region
// rounded up to whole tiles), so key k lands at cells.left + (k − extent.left) / extent.width ·
// cells.width, and queries likewise down. The shapes are united into one path, so adjoining
// shapes draw one line around the mask and not their seams; exports and the window paint it alike.

#include <QPainter>
#include <QPolygonF>
#include <QRectF>
#include <vector>

namespace headlight::render {

void paintMaskOutline(QPainter& painter, const std::vector<QPolygonF>& shapes, const QRectF& extent,
                      const QRectF& cells);
} // namespace headlight::render
