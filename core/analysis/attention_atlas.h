#pragma once
// The attention atlas: one head's (or a layer's mean) T × T attention map at any T, pooled into
// tiles and never held whole. The map is rebuilt from the queries and keys the pass used
// (post-RoPE, core/model/trace.h's LayerTrace::queries/keys) a block of query rows at a time:
// S = scale·Q Kᵀ, the masking rule (core/backend/key_mask.h), then each row's softmax, exact
// because a block holds whole rows. Memory: O(T·d) for Q and K, O(block·T) for a block, and the
// pyramid's finest cached level, O(T²/tile²) with tile = T / kCachedCells rounded up to a power
// of two; coarser levels are pooled from it exactly, finer ones recomputed for the region asked.
// Why tiles keep sums, not means: a coarser tile's mean is then its children's sum over its
// area, the same number the dense map pooled directly gives (tested against the dense path).

#include "model/model_spec.h"
#include "model/trace.h"
#include "tensor/tensor.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace headlight::analysis {

struct AtlasVariant; // analysis/atlas_variant.h

// Queries [T, heads·d] and keys [T, kvHeads·d] of one layer, as the attention kernel read them,
// and which keys each query may see.
struct AtlasInput {
    Tensor queries;
    Tensor keys;
    int heads = 0;
    int kvHeads = 0;
    AttentionRule rule;            // scale, the layer's window, soft-capping
    bool causal = false;
    std::vector<uint8_t> keyValid; // [T]; empty: every key is valid
    // A variant's kernel (sparse mask, LSH, linearized) whose weights replace the softmax rule
    // above; null for the attention the fused kernel runs.
    std::shared_ptr<const AtlasVariant> variant;
};

// A layer captured with CaptureRequest::queriesKeys, as the atlas reads it.
AtlasInput atlasInputOf(const LayerTrace& layer, const ModelSpec& spec,
                        std::vector<uint8_t> keyValid);

// A rectangle of the map in token coordinates, half-open: queries [q0, q1), keys [k0, k1).
struct AtlasRegion {
    int64_t q0 = 0, q1 = 0, k0 = 0, k1 = 0;
};

enum class TilePooling { Mean, Max };

// The region cut into tile × tile cells (the last row and column of tiles may be smaller);
// values [rows · cols] row-major.
struct AtlasTiles {
    AtlasRegion region;
    int64_t tile = 1;
    int64_t rows = 0, cols = 0;
    std::vector<float> values;
    float at(int64_t row, int64_t col) const { return values[std::size_t(row * cols + col)]; }
};

class AttentionAtlas {
public:
    static constexpr int64_t kCachedCells = 2048; // the default cached level's tiles per side
    static constexpr int kAllHeads = -1;          // `head` for the mean over the layer's heads

    // Builds the cached level (at most `cachedCells` tiles a side) and the column sums in one
    // pass over the map. `progress` (may be empty) is told the share done and returns false to
    // cancel (then this throws Cancelled).
    AttentionAtlas(AtlasInput input, int head, const std::function<bool(double)>& progress = {},
                   int64_t cachedCells = kCachedCells);

    struct Cancelled {};

    int64_t tokens() const { return tokens_; }
    const AtlasInput& input() const { return input_; }
    int head() const { return head_; }
    // The cached level's tile size: regions pooled at this size or coarser cost no pass.
    int64_t cachedTile() const { return cachedTile_; }

    // The region pooled into tiles of `tile` tokens (a power of two), exact at every size.
    AtlasTiles tiles(const AtlasRegion& region, int64_t tile, TilePooling pooling) const;
    // The smallest power-of-two tile that cuts the region into at most `cells` tiles per side.
    static int64_t tileFor(const AtlasRegion& region, int64_t cells);

    std::vector<float> row(int64_t query) const;                         // [T], exact
    // The exact weights of the region, [q1 − q0, k1 − k0] (the drawn head, or the heads' mean):
    // for callers that stream a region a block of rows at a time.
    RowMatrix weights(const AtlasRegion& region) const;
    const std::vector<float>& columnSums() const { return columnSums_; } // attention received
    // The k keys the query attends to most, strongest first.
    std::vector<std::pair<int64_t, float>> strongestKeys(int64_t query, int k) const;

    // Rows [q0, q1) of one head's map over all T keys, exact, without an atlas: each row's scores
    // and its own log-sum-exp, as the atlas computes them ([q1 − q0, T]; a row that sees no key
    // is zero). What the statistics that stream over rows read (analysis/streamed_attention.h).
    // `input` must be one an atlas accepts (checkInput).
    static RowMatrix exactRows(const AtlasInput& input, int head, int64_t q0, int64_t q1);
    // Throws std::invalid_argument unless queries and keys match the heads and the mask the
    // tokens.
    static void checkInput(const AtlasInput& input);

private:
    struct Level {
        int64_t tile = 1, rows = 0, cols = 0;
        std::vector<double> sums;
        std::vector<float> maxima;
    };
    // Rows [q0, q1) of the map restricted to keys [k0, k1), exact: [q1 − q0, k1 − k0].
    RowMatrix probabilityRows(int64_t q0, int64_t q1, int64_t k0, int64_t k1) const;
    // One head's scaled scores for those rows and keys, masked keys at −∞.
    static RowMatrix headScores(const AtlasInput& input, int head, int64_t q0, int64_t q1,
                                int64_t k0, int64_t k1);
    static float rowLogSumExp(const RowMatrix& scores, int64_t row); // −∞ when it sees no key
    // Scores → probabilities with each row's log-sum-exp (`lse` indexed by query).
    static void softmaxInPlace(RowMatrix& scores, int64_t q0, const std::vector<float>& lse);
    const std::vector<float>& logSumExpOf(int head) const;
    RowMatrix firstPassRows(int64_t q0, int64_t q1, int64_t k0, int64_t k1);
    void buildCachedLevel(const std::function<bool(double)>& progress, int64_t cachedCells);
    AtlasTiles pooledFromCache(const AtlasRegion& region, int64_t tile, TilePooling pooling) const;
    AtlasTiles computed(const AtlasRegion& region, int64_t tile, TilePooling pooling) const;

    AtlasInput input_;
    int head_ = 0;
    int64_t tokens_ = 0, headDim_ = 0;
    std::vector<std::vector<float>> logSumExp_; // per head drawn: [T] of each row's softmax
                                                // (−∞ for a row that sees no key)
    std::vector<float> columnSums_;
    int64_t cachedTile_ = 1;
    Level cached_;
};

// The dense map's region pooled the same way, for tests and small T: `map` is [T, T].
AtlasTiles poolDense(const Tensor& map, const AtlasRegion& region, int64_t tile,
                     TilePooling pooling);
} // namespace headlight::analysis
