#include "canvas_map.h"

#include <algorithm>
#include <cmath>

namespace headlight::render {

void MapView::fit(QSizeF window, int rows, int cols, double margin) {
    if (rows <= 0 || cols <= 0) return;
    const double width = std::max(1.0, window.width() - 2.0 * margin);
    const double height = std::max(1.0, window.height() - 2.0 * margin);
    cellSize_ = std::clamp(std::min(width / cols, height / rows), kMinCellSize, kMaxCellSize);
    origin_ = QPointF((window.width() - cellSize_ * cols) / 2.0,
                      (window.height() - cellSize_ * rows) / 2.0);
}

void MapView::zoomAt(QPointF pixel, double factor) {
    const double size = std::clamp(cellSize_ * factor, kMinCellSize, kMaxCellSize);
    // The map point under `pixel` stays there: origin' = pixel − (pixel − origin) · size/old.
    origin_ = pixel - (pixel - origin_) * (size / cellSize_);
    cellSize_ = size;
}

QPointF MapView::cellCorner(int row, int col) const {
    return origin_ + QPointF(col * cellSize_, row * cellSize_);
}

MapCell MapView::cellAt(QPointF pixel, int rows, int cols) const {
    const QPointF at = (pixel - origin_) / cellSize_;
    const int col = int(std::floor(at.x())), row = int(std::floor(at.y()));
    if (row < 0 || col < 0 || row >= rows || col >= cols) return {};
    return {row, col};
}
} // namespace headlight::render
