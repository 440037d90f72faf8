#include "analysis/divergence.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace headlight::analysis {
namespace {

// From this many attention weights the per-row statistics run on a thread team.
constexpr std::size_t kParallelElements = std::size_t(1) << 20;

// Why: every key-wise sum below skips padded keys the same way; an empty mask means "all keys".
bool keyCounts(const TokenMask& valid, std::size_t key) {
    return valid.empty() || valid[key] != 0;
}

// p -> -p ln p, with 0 · ln 0 = 0 (and tiny negative rounding treated as 0).
double negPLogP(double p) {
    return p > 0.0 ? -p * std::log(p) : 0.0;
}

// p, m -> p log2(p / m), one term of KL(p‖m); 0 when p = 0.
double klTermBits(double p, double m) {
    return p > 0.0 ? p * std::log2(p / m) : 0.0;
}

// Why clamp: rounding can put a JSD of identical rows a hair below 0, or of disjoint rows a hair
// above 1; the true value lies in [0, 1].
double clampUnit(double value) {
    return std::clamp(value, 0.0, 1.0);
}

// [T] rows p, q -> the entropy of their mixture (p + q) / 2 over the valid keys, in bits.
double mixtureEntropyBits(const float* p, const float* q, const TokenMask& valid) {
    double sum = 0.0;
    for (std::size_t k = 0; k < valid.size(); ++k) {
        if (!valid[k]) continue;
        const double m = 0.5 * (double(p[k]) + double(q[k]));
        if (m > 0.0) sum -= m * std::log2(m);
    }
    return sum;
}

// [T] row, mask -> -Σ p log2 p over the valid keys, in bits. Why via the mixture of the row with
// itself: (p + p) / 2 == p exactly, so two identical heads give H(m) - H(p) == 0 to the last bit.
double rowEntropyBits(std::span<const float> row, const TokenMask& valid) {
    return mixtureEntropyBits(row.data(), row.data(), valid);
}

// [T], [T], [T] or [0] -> (); throws unless the rows (and a non-empty mask) have one length.
void checkSameLength(std::span<const float> p, std::span<const float> q, const TokenMask& valid) {
    if (p.size() != q.size() || (!valid.empty() && valid.size() != p.size()))
        throw std::invalid_argument("JSD rows and mask must have the same length");
}

// [L, H, T] output shape, or [H, T] for a single-layer input.
std::vector<int64_t> perQueryShape(const AttentionView& view, int64_t layers) {
    if (view.singleLayer) return {view.heads, view.tokens};
    return {layers, view.heads, view.tokens};
}

// [L·H, T] row entropies in bits for every head and valid query (0 elsewhere).
std::vector<double> headRowEntropiesBits(const AttentionView& view, const TokenMask& valid) {
    const int64_t headCount = view.layers * view.heads;
    std::vector<double> entropies(static_cast<std::size_t>(headCount * view.tokens), 0.0);
    for (int64_t i = 0; i < headCount; ++i)
        for (int64_t q = 0; q < view.tokens; ++q)
            if (valid[q])
                entropies[i * view.tokens + q] =
                    rowEntropyBits(view.row(i / view.heads, i % view.heads, q), valid);
    return entropies;
}

// Heads i, j -> mean over valid queries of JSD, using JSD = H(m) - ½ H(p) - ½ H(q) (bits) so each
// pair costs one logarithm per key; row entropies come precomputed.
double meanHeadPairJsd(const AttentionView& view, const TokenMask& valid,
                       const std::vector<int64_t>& queries, const std::vector<double>& entropies,
                       int64_t i, int64_t j) {
    double sum = 0.0;
    for (int64_t q : queries) {
        const float* p = view.row(i / view.heads, i % view.heads, q).data();
        const float* r = view.row(j / view.heads, j % view.heads, q).data();
        const double mixture = mixtureEntropyBits(p, r, valid);
        sum += clampUnit(mixture -
                         0.5 * (entropies[i * view.tokens + q] + entropies[j * view.tokens + q]));
    }
    return sum / double(queries.size());
}
} // namespace

double rowEntropyNats(std::span<const float> row) {
    return rowEntropyNats(row, TokenMask{});
}

double rowEntropyNats(std::span<const float> row, const TokenMask& valid) {
    // [T], [T] -> scalar
    if (!valid.empty() && valid.size() != row.size())
        throw std::invalid_argument("entropy row and mask must have the same length");
    double sum = 0.0;
    for (std::size_t k = 0; k < row.size(); ++k)
        if (keyCounts(valid, k)) sum += negPLogP(row[k]);
    return sum;
}

double jensenShannonBits(std::span<const float> p, std::span<const float> q) {
    return jensenShannonBits(p, q, TokenMask{});
}

double jensenShannonBits(std::span<const float> p, std::span<const float> q,
                         const TokenMask& valid) {
    // [T], [T], [T] -> scalar in [0, 1]
    checkSameLength(p, q, valid);
    double sum = 0.0;
    for (std::size_t k = 0; k < p.size(); ++k) {
        if (!keyCounts(valid, k)) continue;
        const double m = 0.5 * (double(p[k]) + double(q[k]));
        sum += 0.5 * klTermBits(p[k], m) + 0.5 * klTermBits(q[k], m);
    }
    return clampUnit(sum);
}

Tensor attentionEntropy(const Tensor& attention, const TokenMask& valid) {
    // [L, H, T, T] -> [L, H, T]
    const AttentionView view = viewAttention(attention, valid);
    Tensor entropy(perQueryShape(view, view.layers));
    float* out = entropy.data();
    // Why parallel: the window computes this after every pass, L·H·T² logarithms (serial when
    // they are few: on a busy machine a thread team costs more than it saves there).
#pragma omp parallel for collapse(2) if (attention.size() >= kParallelElements)
    for (int64_t l = 0; l < view.layers; ++l)
        for (int64_t h = 0; h < view.heads; ++h)
            for (int64_t q = 0; q < view.tokens; ++q)
                if (valid[q])
                    out[(l * view.heads + h) * view.tokens + q] =
                        float(rowEntropyNats(view.row(l, h, q), valid));
    return entropy;
}

Tensor adjacentLayerJsd(const Tensor& attention, const TokenMask& valid) {
    // [L, H, T, T] -> [L-1, H, T]
    if (attention.rank() != 4)
        throw std::invalid_argument("adjacent-layer JSD needs [L, H, T, T], got " +
                                    attention.shapeString());
    const AttentionView view = viewAttention(attention, valid);
    const int64_t pairs = std::max<int64_t>(view.layers - 1, 0);
    Tensor jsd(perQueryShape(view, pairs));
    float* out = jsd.data();
    // Why parallel: as in attentionEntropy.
#pragma omp parallel for collapse(2) if (attention.size() >= kParallelElements)
    for (int64_t l = 0; l < pairs; ++l)
        for (int64_t h = 0; h < view.heads; ++h)
            for (int64_t q = 0; q < view.tokens; ++q)
                if (valid[q])
                    out[(l * view.heads + h) * view.tokens + q] =
                        float(jensenShannonBits(view.row(l, h, q), view.row(l + 1, h, q), valid));
    return jsd;
}

Tensor headJsdMatrix(const Tensor& attention, const TokenMask& valid) {
    // [L, H, T, T] -> [L·H, L·H]
    const AttentionView view = viewAttention(attention, valid);
    const int64_t headCount = view.layers * view.heads;
    Tensor matrix({headCount, headCount});
    const std::vector<int64_t> queries = validPositions(valid);
    if (queries.empty()) return matrix;
    const std::vector<double> entropies = headRowEntropiesBits(view, valid);
    float* out = matrix.data();
    // Why dynamic: row i computes headCount - i - 1 pairs, so the work per row shrinks.
#pragma omp parallel for schedule(dynamic)
    for (int64_t i = 0; i < headCount; ++i) {
        for (int64_t j = i + 1; j < headCount; ++j) {
            const float value = float(meanHeadPairJsd(view, valid, queries, entropies, i, j));
            out[i * headCount + j] = value;
            out[j * headCount + i] = value;
        }
    }
    return matrix;
}
} // namespace headlight::analysis
