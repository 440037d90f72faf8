#pragma once
// Matrix cells (heatmap, model grid) drawn alike on every device but stored as suits it. The
// screen and PNG get one image, one pixel per cell, scaled up without smoothing: exact and fast.
// SVG and PDF get one filled rectangle per cell while the whole figure has at most
// kMaxVectorCells cells, so that a paper's figure stays sharp at any zoom and editable in a
// vector editor; past that the file would grow by megabytes of rectangles, so the image is
// embedded instead.

#include <QImage>
#include <QPainter>
#include <QRectF>
#include <cstddef>

namespace headlight::render {

constexpr std::size_t kMaxVectorCells = 128 * 128;

// Whether `painter` writes vector output (SVG, PDF) and `figureCells` (all the cells the figure
// draws) is small enough for one rectangle per cell.
bool drawsCellsAsRects(const QPainter& painter, std::size_t figureCells);

// `cells` holds one pixel per cell and covers `area`.
void paintCells(QPainter& painter, const QRectF& area, const QImage& cells,
                std::size_t figureCells);
} // namespace headlight::render
