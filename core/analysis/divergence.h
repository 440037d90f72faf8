#pragma once
// Information measures over attention rows: the entropy of each query's attention, and the
// Jensen-Shannon divergence (JSD) between heads, per token and averaged into a head × head matrix.
//
// Logarithm bases differ on purpose:
//  - Entropy is in NATS (natural log): a uniform row over n keys has entropy ln n, one-hot 0.
//  - JSD is in BITS (log base 2), so it lies in [0, 1]: 0 for identical rows, 1 for rows with
//    disjoint support. The RealFormer paper's colour thresholds (0.25 / 0.75) assume this scale.
// 0 · ln 0 is taken as 0. Sums run in double; tensors come back as f32.

#include "analysis/attention_view.h"
#include "tensor/tensor.h"

#include <span>

namespace headlight::analysis {

// [T] row -> -Σ_k p ln p over all keys, in nats.
double rowEntropyNats(std::span<const float> row);

// [T] row, [T] mask -> -Σ_k p ln p over the valid keys, in nats.
double rowEntropyNats(std::span<const float> row, const TokenMask& valid);

// [T] rows p, q -> JSD(p, q) = ½ KL(p‖m) + ½ KL(q‖m), m = (p + q) / 2, in bits, in [0, 1].
double jensenShannonBits(std::span<const float> p, std::span<const float> q);

// [T] rows p, q, [T] mask -> JSD over the valid keys only, in bits, in [0, 1].
double jensenShannonBits(std::span<const float> p, std::span<const float> q,
                         const TokenMask& valid);

// [L, H, T, T] -> [L, H, T] (or [H, T, T] -> [H, T]): entropy of every query row in nats;
// 0 for padded queries.
Tensor attentionEntropy(const Tensor& attention, const TokenMask& valid);

// [L, H, T, T] -> [L-1, H, T]: JSD in bits between layer l head h and layer l+1 head h, per
// query token; 0 for padded queries. A single layer gives [0, H, T].
Tensor adjacentLayerJsd(const Tensor& attention, const TokenMask& valid);

// [L, H, T, T] -> [L·H, L·H] (or [H, T, T] -> [H, H]): for heads i = l·H + h and j, the mean over
// valid queries of JSD(row_i(q), row_j(q)) in bits. Symmetric with a zero diagonal; all zeros
// when no query is valid. Cost: one logarithm per (pair, query, key), O((L·H)² · T²) — about
// 0.7·10⁹ for 144 heads at T = 256 — so rows of the matrix run in parallel (OpenMP); call it off
// the GUI thread.
Tensor headJsdMatrix(const Tensor& attention, const TokenMask& valid);
} // namespace headlight::analysis
