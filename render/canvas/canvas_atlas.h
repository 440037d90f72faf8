#pragma once
// What the Vulkan canvas draws in its atlas mode: a T × T attention map at any T (32,768 tokens
// and more) that is never held whole, drawn from two pictures of pooled tiles placed on the token
// grid: the whole map's overview and the picture of the region in view, refined to at most a few
// hundred tiles a side (exact, one token a tile, once zoomed in). The window's Atlas
// (app/window/atlas_canvas.h) makes the pictures off the GUI thread and hands them in when they
// arrive; a frame only draws the pictures it has.

#include "colormap.h"

#include <QString>
#include <QStringList>
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace headlight::render {

// One picture: rows × cols tiles of tile × tile tokens, its first tile at token (row0, col0). The
// last row and column of tiles may reach past the map's edge; the canvas clips them.
struct CanvasTiles {
    int64_t row0 = 0, col0 = 0;
    int64_t tile = 1;
    int rows = 0, cols = 0;
    std::vector<float> values;     // [rows, cols], row-major
    float low = 0.0f, high = 1.0f; // the picture's own colour scale, as the Atlas tab's
    bool empty() const { return rows == 0 || cols == 0; }
    // The value of the tile that holds token cell (query, key); none outside the picture.
    std::optional<float> valueAt(int64_t query, int64_t key) const {
        const int64_t row = query - row0, col = key - col0;
        if (empty() || row < 0 || col < 0 || row >= rows * tile || col >= cols * tile) return {};
        return values[std::size_t(row / tile * cols + col / tile)];
    }
    // Whether it covers tokens [q0, q1) × [k0, k1) (up to the map's `tokens`).
    bool covers(int64_t q0, int64_t q1, int64_t k0, int64_t k1, int64_t tokens) const {
        const auto end = [tokens](int64_t first, int64_t count) {
            return std::min(tokens, first + count);
        };
        return !empty() && row0 <= q0 && col0 <= k0 && q1 <= end(row0, rows * tile) &&
               k1 <= end(col0, cols * tile);
    }
};

struct CanvasAtlas {
    int64_t tokens = 0;
    Colormap colormap = Colormap::Viridis;
    QStringList labels; // [tokens] token labels (queries and keys are the same text)
    QString title;      // e.g. "Layer 3, head 0"
    QString pooling;    // "mean" or "max": how a tile of many tokens shows its weights
    CanvasTiles overview, detail;
    bool empty() const { return tokens == 0; }
};

enum class AtlasLayer { Overview, Detail };
} // namespace headlight::render
