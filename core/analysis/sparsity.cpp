#include "analysis/sparsity.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace headlight::analysis {
namespace {

// [T] row, [T] mask -> [V] the valid keys' probabilities, largest first.
std::vector<double> validProbabilitiesDescending(std::span<const float> row,
                                                 const TokenMask& valid) {
    if (valid.size() != row.size())
        throw std::invalid_argument("attention row and mask must have the same length");
    std::vector<double> values;
    for (std::size_t k = 0; k < row.size(); ++k)
        if (valid[k]) values.push_back(row[k]);
    std::sort(values.begin(), values.end(), std::greater<>());
    return values;
}

// [V] probabilities, largest first -> the sum of the first k.
double massOfLargest(const std::vector<double>& descending, int64_t k) {
    const auto count =
        static_cast<std::size_t>(std::clamp<int64_t>(k, 0, int64_t(descending.size())));
    double mass = 0.0;
    for (std::size_t i = 0; i < count; ++i)
        mass += descending[i];
    return mass;
}

// [V] probabilities, largest first -> how many it takes to reach fraction · their total.
int64_t keysToCover(const std::vector<double>& descending, float fraction) {
    double total = 0.0;
    for (double v : descending)
        total += v;
    const double target = double(fraction) * total * (1.0 - 1e-6);
    double covered = 0.0;
    std::size_t keys = 0;
    while (keys < descending.size() && covered < target)
        covered += descending[keys++];
    return int64_t(keys);
}

// Per-head output shape: [L, H], or [H] for a single-layer input.
std::vector<int64_t> perHeadShape(const AttentionView& view) {
    if (view.singleLayer) return {view.heads};
    return {view.layers, view.heads};
}
} // namespace

double topKMass(std::span<const float> row, const TokenMask& valid, int64_t k) {
    // [T], [T] -> scalar
    return massOfLargest(validProbabilitiesDescending(row, valid), k);
}

double shareAboveThreshold(std::span<const float> row, const TokenMask& valid, float threshold) {
    // [T], [T] -> scalar in [0, 1]
    if (valid.size() != row.size())
        throw std::invalid_argument("attention row and mask must have the same length");
    int64_t validKeys = 0;
    int64_t above = 0;
    for (std::size_t k = 0; k < row.size(); ++k) {
        if (!valid[k]) continue;
        ++validKeys;
        if (row[k] > threshold) ++above;
    }
    return validKeys ? double(above) / double(validKeys) : 0.0;
}

int64_t keysForMass(std::span<const float> row, const TokenMask& valid, float fraction) {
    // [T], [T] -> count in [0, V]
    return keysToCover(validProbabilitiesDescending(row, valid), fraction);
}

SparsityStats attentionSparsity(const Tensor& attention, const TokenMask& valid,
                                const SparsityOptions& options) {
    // [L, H, T, T] -> 3 × [L, H]
    const AttentionView view = viewAttention(attention, valid);
    const std::vector<int64_t> queries = validPositions(valid);
    SparsityStats stats{Tensor(perHeadShape(view)), Tensor(perHeadShape(view)),
                        Tensor(perHeadShape(view))};
    if (queries.empty()) return stats;
    const double perQuery = 1.0 / double(queries.size());
    for (int64_t l = 0; l < view.layers; ++l)
        for (int64_t h = 0; h < view.heads; ++h) {
            double top = 0.0, share = 0.0, keys = 0.0;
            for (int64_t q : queries) {
                const auto row = view.row(l, h, q);
                // Why sort once: top-k mass and keys-for-mass both read the same sorted row.
                const std::vector<double> descending = validProbabilitiesDescending(row, valid);
                top += massOfLargest(descending, options.topK);
                share += shareAboveThreshold(row, valid, options.threshold);
                keys += double(keysToCover(descending, options.massFraction));
            }
            const int64_t index = l * view.heads + h;
            stats.topKMass.data()[index] = float(top * perQuery);
            stats.shareAboveThreshold.data()[index] = float(share * perQuery);
            stats.keysForMass.data()[index] = float(keys * perQuery);
        }
    return stats;
}
} // namespace headlight::analysis
