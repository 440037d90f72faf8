#pragma once
// What the Vulkan canvas draws: one attention map (any rows × cols, e.g. 2,048 × 2,048 tokens)
// with its labels and colour scale, and the pan/zoom that places it in the window.
//
//   CanvasMap   the values [rows, cols] and how to colour and label them
//   MapView     logical window pixels <-> cells: fit, zoom about a point, pan (pure arithmetic,
//               so the smoke test and the renderer agree on where each cell is)

#include "colormap.h"

#include <QPointF>
#include <QSizeF>
#include <QString>
#include <QStringList>
#include <vector>

namespace headlight::render {

struct CanvasMap {
    int rows = 0, cols = 0;
    std::vector<float> values; // [rows, cols], row-major
    float low = 0.0f, high = 1.0f;
    Colormap colormap = Colormap::Viridis;
    QStringList rowLabels, colLabels; // e.g. query and key tokens; may be empty
    QString title;                    // e.g. "Layer 3 · head 7"
    QString rowAxis = QStringLiteral("query"), colAxis = QStringLiteral("key");
    bool empty() const { return rows == 0 || cols == 0; }
    float at(int row, int col) const {
        return values[std::size_t(row) * std::size_t(cols) + std::size_t(col)];
    }
};

struct MapCell {
    int row = -1, col = -1;
    bool valid() const { return row >= 0 && col >= 0; }
};

class MapView {
public:
    // Logical pixels. Why so small a minimum: a 32,768-token atlas fits a window at ~0.02.
    static constexpr double kMinCellSize = 0.002, kMaxCellSize = 400.0;

    // The whole map centred in `window` with square cells and `margin` pixels around it (room for
    // the title and the token labels).
    void fit(QSizeF window, int rows, int cols, double margin = 56.0);
    // Scales by `factor` keeping the point under `pixel` fixed (clamped to the size limits).
    void zoomAt(QPointF pixel, double factor);
    void pan(QPointF delta) { origin_ += delta; }

    QPointF origin() const { return origin_; } // logical pixel of cell (0, 0)'s top-left corner
    double cellSize() const { return cellSize_; }
    QPointF cellCorner(int row, int col) const;
    // The cell under `pixel`, or an invalid cell outside [0, rows) × [0, cols).
    MapCell cellAt(QPointF pixel, int rows, int cols) const;

private:
    QPointF origin_{0.0, 0.0};
    double cellSize_ = 1.0;
};
} // namespace headlight::render
