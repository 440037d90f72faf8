#pragma once
// How concentrated each head's attention is: top-k mass, the share of keys above a threshold,
// and how many keys it takes to cover a fraction of the mass. Per row first, then averaged over
// the valid queries of each head.

#include "analysis/attention_view.h"
#include "tensor/tensor.h"

#include <span>

namespace headlight::analysis {

struct SparsityOptions {
    int64_t topK = 1;          // keys counted by the top-k mass (clamped to the valid key count)
    float threshold = 0.1f;    // a key counts as "above" when its probability is > threshold
    float massFraction = 0.9f; // the share of a row's mass that keysForMass must cover
};

// Each [L, H] (or [H] for a single-layer input), averaged over valid queries; 0 for a head with
// no valid query.
struct SparsityStats {
    Tensor topKMass;            // mean total probability of the k largest valid keys
    Tensor shareAboveThreshold; // mean fraction of valid keys whose probability > threshold
    Tensor keysForMass;         // mean of the fewest valid keys whose mass reaches massFraction
};

// [T] row, [T] mask -> the summed probability of the k largest valid keys.
double topKMass(std::span<const float> row, const TokenMask& valid, int64_t k);

// [T] row, [T] mask -> the fraction of valid keys with probability > threshold (0 if none valid).
double shareAboveThreshold(std::span<const float> row, const TokenMask& valid, float threshold);

// [T] row, [T] mask -> the fewest valid keys, largest first, whose mass reaches fraction · (the
// row's valid mass). A relative slack of 1e-6 absorbs f32 rounding, so a uniform row over 10
// keys needs exactly 9 keys for 0.9.
int64_t keysForMass(std::span<const float> row, const TokenMask& valid, float fraction);

// [L, H, T, T] -> three [L, H] tensors (or [H, T, T] -> three [H]).
SparsityStats attentionSparsity(const Tensor& attention, const TokenMask& valid,
                                const SparsityOptions& options = {});
} // namespace headlight::analysis
