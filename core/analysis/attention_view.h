#pragma once
// Shared input handling for the analysis functions: the shape of captured attention, the token
// validity mask, and access to one attention row. Every analysis function validates its input
// here, so shape and mask errors read the same everywhere.
//
// Conventions for the whole library (namespace headlight::analysis):
//  - Attention probabilities are A[layer, head, query, key], shape [L, H, T, T], or one layer
//    [H, T, T]; each row sums to 1 over the valid keys.
//  - `valid` (a TokenMask of length T, 0 = padding) excludes positions from every statistic:
//    padded query rows are skipped (their per-token outputs are 0 and they are not counted in any
//    mean), and padded keys are ignored (treated as probability 0).

#include "tensor/tensor.h"

#include <cstdint>
#include <span>
#include <vector>

namespace headlight::analysis {

using TokenMask = std::vector<uint8_t>; // length T; 0 = padding, anything else = a real token

// A read-only view of attention [L, H, T, T]; a single layer [H, T, T] is seen as L = 1.
struct AttentionView {
    const float* data = nullptr;
    int64_t layers = 0;
    int64_t heads = 0;
    int64_t tokens = 0;
    bool singleLayer = false; // the input was [H, T, T]: outputs drop the layer axis

    // [T]: the probabilities of `query` over all keys for (layer, head).
    std::span<const float> row(int64_t layer, int64_t head, int64_t query) const;
};

// [L, H, T, T] or [H, T, T] -> view. Throws std::invalid_argument for another rank, a non-square
// T × T block, or a mask whose length is not T.
AttentionView viewAttention(const Tensor& attention, const TokenMask& valid);

// [T] mask -> nothing; throws std::invalid_argument unless valid.size() == tokens.
void checkMask(const TokenMask& valid, int64_t tokens);

// [T] mask -> [V] the positions of the real tokens, ascending.
std::vector<int64_t> validPositions(const TokenMask& valid);

// T -> [T] a mask with every position real.
TokenMask allValid(int64_t tokens);

// L tensors of [H, T, T] -> [L, H, T, T]; throws std::invalid_argument if the shapes differ.
Tensor stackLayers(const std::vector<Tensor>& layers);
} // namespace headlight::analysis
