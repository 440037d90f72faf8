#include "analysis/attention_atlas.h"

#include "analysis/atlas_variant.h"
#include "backend/cpu/cpu_gemm.h"
#include "backend/key_mask.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <omp.h>
#include <stdexcept>
#include <string>

namespace headlight::analysis {
namespace {

constexpr int64_t kBlockRows = 64; // query rows per pass block: [64, T] floats each

int64_t ceilDiv(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

int64_t powerOfTwoAtLeast(int64_t n) {
    int64_t p = 1;
    while (p < n)
        p *= 2;
    return p;
}

void checkRegion(const AtlasRegion& r, int64_t tokens) {
    if (r.q0 < 0 || r.k0 < 0 || r.q1 > tokens || r.k1 > tokens || r.q0 >= r.q1 || r.k0 >= r.k1)
        throw std::invalid_argument("atlas region queries " + std::to_string(r.q0) + ":" +
                                    std::to_string(r.q1) + ", keys " + std::to_string(r.k0) + ":" +
                                    std::to_string(r.k1) + " is empty or outside the " +
                                    std::to_string(tokens) + " tokens");
}

void checkTile(int64_t tile) {
    if (tile < 1 || (tile & (tile - 1)) != 0)
        throw std::invalid_argument("atlas tile size " + std::to_string(tile) +
                                    " is not a power of two");
}

// Pools `p` (rows [q0, q0 + p.rows()) × keys [k0, k0 + p.cols()) of the map) into the tiles of
// `out`, adding to sums and raising maxima; `out` covers `region` in tiles of `tile`.
void poolInto(const RowMatrix& p, int64_t q0, int64_t k0, const AtlasRegion& region, int64_t tile,
              int64_t cols, std::vector<double>& sums, std::vector<float>& maxima) {
    for (int64_t r = 0; r < p.rows(); ++r) {
        const int64_t tileRow = (q0 + r - region.q0) / tile;
        for (int64_t c = 0; c < p.cols(); ++c) {
            const int64_t at = tileRow * cols + (k0 + c - region.k0) / tile;
            const float value = p(r, c);
            sums[std::size_t(at)] += value;
            maxima[std::size_t(at)] = std::max(maxima[std::size_t(at)], value);
        }
    }
}

// Tiles from sums and maxima: the mean over each tile's whole area, or its maximum.
AtlasTiles finish(const AtlasRegion& region, int64_t tile, TilePooling pooling,
                  const std::vector<double>& sums, const std::vector<float>& maxima) {
    AtlasTiles tiles{region,
                     tile,
                     ceilDiv(region.q1 - region.q0, tile),
                     ceilDiv(region.k1 - region.k0, tile),
                     {}};
    tiles.values.resize(std::size_t(tiles.rows * tiles.cols));
    for (int64_t r = 0; r < tiles.rows; ++r) {
        const int64_t height = std::min(tile, region.q1 - region.q0 - r * tile);
        for (int64_t c = 0; c < tiles.cols; ++c) {
            const int64_t width = std::min(tile, region.k1 - region.k0 - c * tile);
            const auto at = std::size_t(r * tiles.cols + c);
            tiles.values[at] =
                pooling == TilePooling::Max ? maxima[at] : float(sums[at] / double(height * width));
        }
    }
    return tiles;
}

} // namespace

AtlasInput atlasInputOf(const LayerTrace& layer, const ModelSpec& spec,
                        std::vector<uint8_t> keyValid) {
    return {layer.queries, layer.keys,         spec.heads, spec.kvHeads,
            layer.attentionRule, spec.causal, std::move(keyValid)};
}

AttentionAtlas::AttentionAtlas(AtlasInput input, int head,
                               const std::function<bool(double)>& progress, int64_t cachedCells)
    : input_(std::move(input))
    , head_(head) {
    checkInput(input_);
    if (head != kAllHeads && (head < 0 || head >= input_.heads))
        throw std::invalid_argument("atlas: head " + std::to_string(head) + " is outside 0.." +
                                    std::to_string(input_.heads - 1));
    tokens_ = input_.queries.dim(0);
    headDim_ = input_.queries.dim(1) / input_.heads;
    buildCachedLevel(progress, std::max<int64_t>(1, cachedCells));
}

void AttentionAtlas::checkInput(const AtlasInput& input) {
    const Tensor& q = input.queries;
    const Tensor& k = input.keys;
    if (q.rank() != 2 || k.rank() != 2 || q.dim(0) != k.dim(0) || input.heads <= 0 ||
        input.kvHeads <= 0 || input.heads % input.kvHeads != 0 || q.dim(1) % input.heads != 0 ||
        q.dim(1) / input.heads * input.kvHeads != k.dim(1))
        throw std::invalid_argument("atlas: queries " + q.shapeString() + " and keys " +
                                    k.shapeString() + " do not match " +
                                    std::to_string(input.heads) + " heads and " +
                                    std::to_string(input.kvHeads) + " key/value heads");
    if (!input.keyValid.empty() && int64_t(input.keyValid.size()) != q.dim(0))
        throw std::invalid_argument("atlas: the key mask's length is not the token count");
}

RowMatrix AttentionAtlas::headScores(const AtlasInput& input, int head, int64_t q0, int64_t q1,
                                     int64_t k0, int64_t k1) {
    const int64_t d = input.queries.dim(1) / input.heads, rows = q1 - q0, cols = k1 - k0;
    const int64_t kvHead = head / (input.heads / input.kvHeads);
    const RowMatrix qh = input.queries.matrix().block(q0, head * d, rows, d);
    const RowMatrix kh = input.keys.matrix().block(k0, kvHead * d, cols, d);
    RowMatrix s(rows, cols);
    cpu::gemm(qh.data(), kh.data(), s.data(), rows, d, cols, true, input.rule.scale);
    if (const float c = input.rule.softcap; c > 0.0f)
        s = s.unaryExpr([c](float x) { return c * std::tanh(x / c); });
    const KeyMask mask{input.causal, input.rule.slidingWindow, input.keyValid};
    const float minusInfinity = -std::numeric_limits<float>::infinity();
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
            if (!mask.allows(q0 + r, k0 + c)) s(r, c) = minusInfinity;
    return s;
}

float AttentionAtlas::rowLogSumExp(const RowMatrix& scores, int64_t row) {
    const float top = scores.row(row).maxCoeff();
    return std::isfinite(top) ? top + std::log((scores.row(row).array() - top).exp().sum()) : top;
}

void AttentionAtlas::softmaxInPlace(RowMatrix& scores, int64_t q0, const std::vector<float>& lse) {
    for (int64_t r = 0; r < scores.rows(); ++r) {
        const float rowLse = lse[std::size_t(q0 + r)];
        if (std::isfinite(rowLse))
            scores.row(r).array() = (scores.row(r).array() - rowLse).exp();
        else
            scores.row(r).setZero();
    }
}

const std::vector<float>& AttentionAtlas::logSumExpOf(int head) const {
    return logSumExp_[std::size_t(head_ == kAllHeads ? head : 0)];
}

RowMatrix AttentionAtlas::probabilityRows(int64_t q0, int64_t q1, int64_t k0, int64_t k1) const {
    const int first = head_ == kAllHeads ? 0 : head_;
    const int last = head_ == kAllHeads ? input_.heads : head_ + 1;
    RowMatrix sum = RowMatrix::Zero(q1 - q0, k1 - k0);
    for (int h = first; h < last; ++h) {
        if (input_.variant) {
            sum += variantHeadRows(input_, h, q0, q1, k0, k1, logSumExpOf(h));
            continue;
        }
        RowMatrix p = headScores(input_, h, q0, q1, k0, k1);
        softmaxInPlace(p, q0, logSumExpOf(h));
        sum += p;
    }
    return head_ == kAllHeads ? RowMatrix(sum / float(input_.heads)) : sum;
}

// Rows [q0, q1) over keys [k0, k1), which hold every key those rows see: each row's
// log-sum-exp is recorded, and the probabilities (the heads' mean for the layer) returned.
RowMatrix AttentionAtlas::firstPassRows(int64_t q0, int64_t q1, int64_t k0, int64_t k1) {
    const int first = head_ == kAllHeads ? 0 : head_;
    const int last = head_ == kAllHeads ? input_.heads : head_ + 1;
    RowMatrix sum = RowMatrix::Zero(q1 - q0, k1 - k0);
    for (int h = first; h < last; ++h) {
        std::vector<float>& lse = logSumExp_[std::size_t(head_ == kAllHeads ? h : 0)];
        if (input_.variant) {
            sum += variantHeadRowsRecording(input_, h, q0, q1, k0, k1, lse);
            continue;
        }
        RowMatrix s = headScores(input_, h, q0, q1, k0, k1);
        for (int64_t r = 0; r < s.rows(); ++r)
            lse[std::size_t(q0 + r)] = rowLogSumExp(s, r);
        softmaxInPlace(s, q0, lse);
        sum += s;
    }
    return head_ == kAllHeads ? RowMatrix(sum / float(input_.heads)) : sum;
}

// One pass over the map, a block of whole rows at a time: each row's log-sum-exp (exact, since
// the block holds every key the row sees), then the cached level and the column sums.
void AttentionAtlas::buildCachedLevel(const std::function<bool(double)>& progress,
                                      int64_t cachedCells) {
    cachedTile_ = powerOfTwoAtLeast(ceilDiv(tokens_, cachedCells));
    const int64_t cells = ceilDiv(tokens_, cachedTile_);
    std::vector<double> sums(std::size_t(cells * cells), 0.0);
    std::vector<float> maxima(std::size_t(cells * cells), 0.0f);
    logSumExp_.assign(std::size_t(head_ == kAllHeads ? input_.heads : 1),
                      std::vector<float>(std::size_t(tokens_)));
    // Why a multiple of the tile: blocks then fill disjoint tile rows, so threads never share one.
    const int64_t blockRows = std::max(kBlockRows, cachedTile_);
    const int64_t blocks = ceilDiv(tokens_, blockRows);
    const KeyMask mask{input_.causal, input_.rule.slidingWindow, input_.keyValid};
    std::vector<std::vector<double>> columnParts(std::size_t(omp_get_max_threads()),
                                                 std::vector<double>(std::size_t(tokens_), 0.0));
    const AtlasRegion whole{0, tokens_, 0, tokens_};
    const int64_t chunk = 4 * omp_get_max_threads();
    for (int64_t first = 0; first < blocks; first += chunk) {
        if (progress && !progress(double(first) / double(blocks))) throw Cancelled{};
#pragma omp parallel for schedule(dynamic)
        for (int64_t b = first; b < std::min(blocks, first + chunk); ++b) {
            const int64_t q0 = b * blockRows, q1 = std::min(tokens_, q0 + blockRows);
            // A variant's rows are drawn over every key: its own rule decides which it sees.
            const int64_t k0 = input_.variant ? 0 : mask.firstKey(q0);
            const int64_t k1 = input_.variant ? tokens_ : mask.lastKey(q1 - 1, tokens_) + 1;
            const RowMatrix p = firstPassRows(q0, q1, k0, k1);
            poolInto(p, q0, k0, whole, cachedTile_, cells, sums, maxima);
            std::vector<double>& columns = columnParts[std::size_t(omp_get_thread_num())];
            for (int64_t r = 0; r < p.rows(); ++r)
                if (mask.valid(q0 + r))
                    for (int64_t c = 0; c < p.cols(); ++c)
                        columns[std::size_t(k0 + c)] += p(r, c);
        }
    }
    if (progress && !progress(1.0)) throw Cancelled{};
    columnSums_.assign(std::size_t(tokens_), 0.0f);
    for (const auto& part : columnParts)
        for (int64_t j = 0; j < tokens_; ++j)
            columnSums_[std::size_t(j)] += float(part[std::size_t(j)]);
    cached_ = {cachedTile_, cells, cells, std::move(sums), std::move(maxima)};
}

int64_t AttentionAtlas::tileFor(const AtlasRegion& region, int64_t cells) {
    const int64_t extent = std::max(region.q1 - region.q0, region.k1 - region.k0);
    return powerOfTwoAtLeast(ceilDiv(extent, std::max<int64_t>(1, cells)));
}

AtlasTiles AttentionAtlas::tiles(const AtlasRegion& region, int64_t tile,
                                 TilePooling pooling) const {
    checkRegion(region, tokens_);
    checkTile(tile);
    const auto aligned = [&](int64_t at) { return at % cachedTile_ == 0 || at == tokens_; };
    if (tile >= cachedTile_ && aligned(region.q0) && aligned(region.k0) && aligned(region.q1) &&
        aligned(region.k1))
        return pooledFromCache(region, tile, pooling);
    return computed(region, tile, pooling);
}

// Coarser tiles as sums and maxima of the cached level's cells: exact, and no pass at all.
AtlasTiles AttentionAtlas::pooledFromCache(const AtlasRegion& region, int64_t tile,
                                           TilePooling pooling) const {
    const int64_t factor = tile / cachedTile_;
    const int64_t rows = ceilDiv(region.q1 - region.q0, tile),
                  cols = ceilDiv(region.k1 - region.k0, tile);
    std::vector<double> sums(std::size_t(rows * cols), 0.0);
    std::vector<float> maxima(std::size_t(rows * cols), 0.0f);
    const int64_t r0 = region.q0 / cachedTile_, c0 = region.k0 / cachedTile_;
    const int64_t r1 = ceilDiv(region.q1, cachedTile_), c1 = ceilDiv(region.k1, cachedTile_);
    for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) {
            const auto from = std::size_t(r * cached_.cols + c);
            const auto to = std::size_t((r - r0) / factor * cols + (c - c0) / factor);
            sums[to] += cached_.sums[from];
            maxima[to] = std::max(maxima[to], cached_.maxima[from]);
        }
    return finish(region, tile, pooling, sums, maxima);
}

// Finer tiles (or an unaligned region) recomputed from Q and K for the region only.
AtlasTiles AttentionAtlas::computed(const AtlasRegion& region, int64_t tile,
                                    TilePooling pooling) const {
    const int64_t rows = ceilDiv(region.q1 - region.q0, tile),
                  cols = ceilDiv(region.k1 - region.k0, tile);
    std::vector<double> sums(std::size_t(rows * cols), 0.0);
    std::vector<float> maxima(std::size_t(rows * cols), 0.0f);
    const int64_t blockRows = std::max(kBlockRows, tile);
    const int64_t blocks = ceilDiv(region.q1 - region.q0, blockRows);
#pragma omp parallel for schedule(dynamic)
    for (int64_t b = 0; b < blocks; ++b) {
        const int64_t q0 = region.q0 + b * blockRows, q1 = std::min(region.q1, q0 + blockRows);
        poolInto(probabilityRows(q0, q1, region.k0, region.k1), q0, region.k0, region, tile, cols,
                 sums, maxima);
    }
    return finish(region, tile, pooling, sums, maxima);
}

RowMatrix AttentionAtlas::exactRows(const AtlasInput& input, int head, int64_t q0, int64_t q1) {
    // Why: a variant's weights come from its own rule (atlas_variant.h), not a softmax of Q Kᵀ.
    if (input.variant)
        throw std::invalid_argument("atlas: rows rebuilt without the atlas are the model's own "
                                    "attention only; draw a variant through AttentionAtlas");
    const int64_t tokens = input.queries.dim(0);
    const KeyMask mask{input.causal, input.rule.slidingWindow, input.keyValid};
    const int64_t k0 = mask.firstKey(q0), k1 = mask.lastKey(q1 - 1, tokens) + 1;
    RowMatrix s = headScores(input, head, q0, q1, k0, k1);
    std::vector<float> lse(std::size_t(q1), 0.0f);
    for (int64_t r = 0; r < s.rows(); ++r)
        lse[std::size_t(q0 + r)] = rowLogSumExp(s, r);
    softmaxInPlace(s, q0, lse);
    RowMatrix rows = RowMatrix::Zero(q1 - q0, tokens);
    rows.middleCols(k0, k1 - k0) = s;
    return rows;
}

std::vector<float> AttentionAtlas::row(int64_t query) const {
    if (query < 0 || query >= tokens_)
        throw std::invalid_argument("atlas: query " + std::to_string(query) + " is outside 0.." +
                                    std::to_string(tokens_ - 1));
    const RowMatrix p = probabilityRows(query, query + 1, 0, tokens_);
    return std::vector<float>(p.data(), p.data() + p.size());
}

RowMatrix AttentionAtlas::weights(const AtlasRegion& region) const {
    checkRegion(region, tokens_);
    return probabilityRows(region.q0, region.q1, region.k0, region.k1);
}

std::vector<std::pair<int64_t, float>> AttentionAtlas::strongestKeys(int64_t query, int k) const {
    const std::vector<float> weights = row(query);
    std::vector<std::pair<int64_t, float>> keys;
    for (int64_t j = 0; j < tokens_; ++j)
        if (weights[std::size_t(j)] > 0.0f) keys.emplace_back(j, weights[std::size_t(j)]);
    const auto strongerFirst = [](const auto& a, const auto& b) {
        return a.second != b.second ? a.second > b.second : a.first < b.first;
    };
    const auto kept = std::min<std::size_t>(keys.size(), std::size_t(std::max(0, k)));
    std::partial_sort(keys.begin(), keys.begin() + std::ptrdiff_t(kept), keys.end(), strongerFirst);
    keys.resize(kept);
    return keys;
}

AtlasTiles poolDense(const Tensor& map, const AtlasRegion& region, int64_t tile,
                     TilePooling pooling) {
    if (map.rank() != 2 || map.dim(0) != map.dim(1))
        throw std::invalid_argument("poolDense: the map " + map.shapeString() + " is not [T, T]");
    checkRegion(region, map.dim(0));
    checkTile(tile);
    const RowMatrix block =
        map.matrix().block(region.q0, region.k0, region.q1 - region.q0, region.k1 - region.k0);
    const int64_t rows = ceilDiv(region.q1 - region.q0, tile),
                  cols = ceilDiv(region.k1 - region.k0, tile);
    std::vector<double> sums(std::size_t(rows * cols), 0.0);
    std::vector<float> maxima(std::size_t(rows * cols), 0.0f);
    poolInto(block, region.q0, region.k0, region, tile, cols, sums, maxima);
    return finish(region, tile, pooling, sums, maxima);
}
} // namespace headlight::analysis
