#pragma once
// The mask overlay of the attention atlas: which cells a variant's nominal mask allows (its rows
// of keys: a sparse mask's band, blocks, random blocks and global tokens, or LSH's buckets; the
// model's causal rule, window and padding when it has no pattern), per tile the share of cells it
// allows and the attention mass outside it (exact, streamed from the atlas a block of rows at a
// time), and its outline as a few straight-edged shapes in token coordinates: consecutive rows
// whose runs of allowed keys move by a constant step merge into one trapezoid, so a band over
// 32,768 tokens is a handful of shapes, not 32,768 rectangles.

#include "analysis/attention_atlas.h"
#include "backend/backend.h"

#include <optional>
#include <string>
#include <vector>

namespace headlight::analysis {

struct AtlasMask {
    std::optional<SparsePattern> pattern; // rows of keys per pattern head (repeats allowed)
    // Without a pattern: which keys each query sees by the model's rule.
    bool causal = false;
    int slidingWindow = 0;
    std::vector<uint8_t> keyValid; // [T]; empty: every key is valid
};

// The mask of the atlas input's variant (its rows of keys) or, for a linearized kernel or no
// variant, the model's rule.
AtlasMask atlasMaskOf(const AtlasInput& input);

// Runs [first, end) of the keys in [k0, k1) the mask allows query i of `head`
// (AttentionAtlas::kAllHeads: allowed in any head), ascending and disjoint.
std::vector<std::pair<int64_t, int64_t>> allowedRuns(const AtlasMask& mask, int head, int64_t query,
                                                     int64_t k0, int64_t k1);

// Per tile of `tile` tokens (a power of two; the last row and column may be smaller), row-major.
struct MaskOverlayTiles {
    AtlasRegion region;
    int64_t tile = 1, rows = 0, cols = 0;
    std::vector<float> allowedShare; // allowed cells / cells of the tile
    std::vector<double> mass;        // attention on the tile's cells
    std::vector<double> outsideMass; // of it, on cells the mask does not allow
    double outsideShare() const;     // Σ outsideMass / Σ mass over the region (0 for no mass)
};

// The atlas's head (or mean) against the mask over `region`, exact: the region's weights are
// read from the atlas 64 rows (or a tile's rows) at a time, never whole.
MaskOverlayTiles maskOverlayTiles(const AttentionAtlas& atlas, const AtlasMask& mask,
                                  const AtlasRegion& region, int64_t tile);

// Rows [q0, q1) in token coordinates between a left and a right edge, each straight from its
// value at q0 to its value at q1 (keys; a cell (i, j) spans [i, i + 1) × [j, j + 1)).
struct OutlineShape {
    double q0 = 0, q1 = 0;
    double left0 = 0, left1 = 0, right0 = 0, right1 = 0;
};

// The outline of the allowed cells of `region`: every allowed cell lies inside one shape; a
// shape spans a run of rows whose allowed runs each move by a constant step per row.
std::vector<OutlineShape> maskOutline(const AtlasMask& mask, int head, const AtlasRegion& region);
} // namespace headlight::analysis
