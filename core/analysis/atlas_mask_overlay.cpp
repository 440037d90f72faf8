#include "analysis/atlas_mask_overlay.h"

#include "analysis/atlas_variant.h"
#include "backend/key_mask.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace headlight::analysis {
namespace {

using Runs = std::vector<std::pair<int64_t, int64_t>>;

int64_t tileCount(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

// Sorted keys → runs of consecutive keys.
Runs runsOf(std::vector<int64_t>& keys) {
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    Runs runs;
    for (const int64_t j : keys) {
        if (!runs.empty() && runs.back().second == j)
            ++runs.back().second;
        else
            runs.emplace_back(j, j + 1);
    }
    return runs;
}

Runs patternRuns(const SparsePattern& pattern, int head, int64_t query, int64_t k0, int64_t k1) {
    std::vector<int64_t> keys;
    const int first = head == AttentionAtlas::kAllHeads ? 0 : head % pattern.heads;
    const int last = head == AttentionAtlas::kAllHeads ? pattern.heads : first + 1;
    for (int h = first; h < last; ++h) {
        const auto row = std::size_t(int64_t(h) * pattern.tokens + query);
        for (int32_t e = pattern.rowStart[row]; e < pattern.rowStart[row + 1]; ++e)
            if (const int64_t j = pattern.keys[std::size_t(e)]; j >= k0 && j < k1)
                keys.push_back(j);
    }
    return runsOf(keys);
}

Runs ruleRuns(const AtlasMask& mask, int64_t query, int64_t k0, int64_t k1) {
    const KeyMask rule{mask.causal, mask.slidingWindow, mask.keyValid};
    Runs runs;
    const int64_t from = std::max(k0, rule.firstKey(query));
    const int64_t to = rule.lastKey(query, k1) + 1;
    for (int64_t j = from; j < to; ++j) {
        if (!rule.valid(j)) continue;
        if (!runs.empty() && runs.back().second == j)
            ++runs.back().second;
        else
            runs.emplace_back(j, j + 1);
    }
    return runs;
}

// The tiles of one block of rows: allowed cells, mass and mass inside the mask.
void accumulate(const RowMatrix& weights, const AtlasMask& mask, int head, const AtlasRegion& block,
                const AtlasRegion& region, int64_t tile, MaskOverlayTiles& out,
                std::vector<double>& allowed) {
    for (int64_t i = block.q0; i < block.q1; ++i) {
        const auto row = weights.row(i - block.q0);
        const int64_t tileRow = (i - region.q0) / tile;
        for (int64_t j = region.k0; j < region.k1; ++j)
            out.mass[std::size_t(tileRow * out.cols + (j - region.k0) / tile)] +=
                row(j - region.k0);
        for (const auto& [first, end] : allowedRuns(mask, head, i, region.k0, region.k1))
            for (int64_t j = first; j < end; ++j) {
                const auto at = std::size_t(tileRow * out.cols + (j - region.k0) / tile);
                allowed[at] += 1.0;
                out.outsideMass[at] -= row(j - region.k0); // the inside, subtracted below
            }
    }
}

// One trapezoid per run of a chain of rows [start, start + length) whose runs start at `runs`
// and move by `steps` per row, widened to hold every cell (edges through the cells' corners).
void emitChain(const Runs& runs, const Runs& steps, int64_t start, int64_t length,
               std::vector<OutlineShape>& out) {
    for (std::size_t k = 0; k < runs.size(); ++k) {
        const double a = double(runs[k].first), b = double(runs[k].second);
        const double da = steps.empty() ? 0.0 : double(steps[k].first);
        const double db = steps.empty() ? 0.0 : double(steps[k].second);
        const double n = double(length);
        const double leftShift = std::max(da, 0.0), rightShift = std::max(-db, 0.0);
        out.push_back({double(start), double(start + length), a - leftShift, a + da * n - leftShift,
                       b + rightShift, b + db * n + rightShift});
    }
}
} // namespace

AtlasMask atlasMaskOf(const AtlasInput& input) {
    AtlasMask mask;
    mask.keyValid = input.keyValid;
    if (const auto& v = input.variant) {
        mask.pattern = v->pattern;
        mask.causal = v->causal;
        mask.slidingWindow = v->slidingWindow;
    } else {
        mask.causal = input.causal;
        mask.slidingWindow = input.rule.slidingWindow;
    }
    if (mask.keyValid.empty()) mask.keyValid.assign(std::size_t(input.queries.dim(0)), 1);
    return mask;
}

std::vector<std::pair<int64_t, int64_t>> allowedRuns(const AtlasMask& mask, int head, int64_t query,
                                                     int64_t k0, int64_t k1) {
    return mask.pattern ? patternRuns(*mask.pattern, head, query, k0, k1)
                        : ruleRuns(mask, query, k0, k1);
}

double MaskOverlayTiles::outsideShare() const {
    double total = 0.0, outside = 0.0;
    for (std::size_t i = 0; i < mass.size(); ++i)
        total += mass[i], outside += outsideMass[i];
    return total > 0.0 ? outside / total : 0.0;
}

MaskOverlayTiles maskOverlayTiles(const AttentionAtlas& atlas, const AtlasMask& mask,
                                  const AtlasRegion& region, int64_t tile) {
    if (tile < 1 || (tile & (tile - 1)) != 0)
        throw std::invalid_argument("atlas tile size " + std::to_string(tile) +
                                    " is not a power of two");
    MaskOverlayTiles out{region,
                         tile,
                         tileCount(region.q1 - region.q0, tile),
                         tileCount(region.k1 - region.k0, tile),
                         {},
                         {},
                         {}};
    const auto cells = std::size_t(out.rows * out.cols);
    out.mass.assign(cells, 0.0);
    out.outsideMass.assign(cells, 0.0);
    std::vector<double> allowed(cells, 0.0);
    // Why a multiple of the tile: blocks then fill disjoint rows of tiles, so threads never share.
    const int64_t blockRows = std::max<int64_t>(64, tile);
    const int64_t blocks = tileCount(region.q1 - region.q0, blockRows);
#pragma omp parallel for schedule(dynamic)
    for (int64_t b = 0; b < blocks; ++b) {
        const int64_t q0 = region.q0 + b * blockRows;
        const AtlasRegion block{q0, std::min(region.q1, q0 + blockRows), region.k0, region.k1};
        accumulate(atlas.weights(block), mask, atlas.head(), block, region, tile, out, allowed);
    }
    out.allowedShare.resize(cells);
    for (int64_t r = 0; r < out.rows; ++r)
        for (int64_t c = 0; c < out.cols; ++c) {
            const auto at = std::size_t(r * out.cols + c);
            const int64_t height = std::min(tile, region.q1 - region.q0 - r * tile);
            const int64_t width = std::min(tile, region.k1 - region.k0 - c * tile);
            out.allowedShare[at] = float(allowed[at] / double(height * width));
            out.outsideMass[at] += out.mass[at]; // −inside + all
        }
    return out;
}

std::vector<OutlineShape> maskOutline(const AtlasMask& mask, int head, const AtlasRegion& region) {
    std::vector<OutlineShape> out;
    Runs chainStart, steps, last;
    int64_t start = region.q0, length = 0;
    for (int64_t i = region.q0; i < region.q1; ++i) {
        const Runs runs = allowedRuns(mask, head, i, region.k0, region.k1);
        bool continues = length > 0 && runs.size() == last.size();
        Runs step(runs.size());
        for (std::size_t k = 0; continues && k < runs.size(); ++k) {
            step[k] = {runs[k].first - last[k].first, runs[k].second - last[k].second};
            continues = length == 1 || step[k] == steps[k];
        }
        if (continues) {
            if (length == 1) steps = step;
            ++length;
        } else {
            if (length > 0) emitChain(chainStart, length > 1 ? steps : Runs{}, start, length, out);
            chainStart = runs, steps.clear(), start = i, length = 1;
        }
        last = runs;
    }
    if (length > 0) emitChain(chainStart, length > 1 ? steps : Runs{}, start, length, out);
    return out;
}
} // namespace headlight::analysis
