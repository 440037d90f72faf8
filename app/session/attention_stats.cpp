#include "attention_stats.h"

#include "analysis/divergence.h"
#include "analysis/rollout.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace headlight::app {
namespace {

constexpr int64_t kGridPoints = 128;

ViolinSet violinsOf(const Tensor& perToken, const analysis::TokenMask& valid, float high) {
    return violinSet(analysis::collectHeadValues(perToken, valid), high);
}

// Why: a learned Linformer's map A·F (and Nyström's) weighs value tokens with signs, and its rows
// need not sum to 1; entropy, JSD and rollout need distributions, so for such a map they read each
// row's shares |w_ij| / Σ_j |w_ij| (an all-zero row stays zero). Empty for a map without signs.
std::optional<Tensor> signedShares(const Tensor& attention) {
    const auto values = attention.values();
    if (std::none_of(values.begin(), values.end(), [](float w) { return w < 0.0f; }))
        return std::nullopt;
    Tensor shares = attention;
    const int64_t keys = attention.dim(int(attention.rank()) - 1);
    for (float* row = shares.data(); row < shares.data() + shares.size(); row += keys) {
        double sum = 0.0;
        for (int64_t j = 0; j < keys; ++j)
            sum += std::abs(row[j]);
        for (int64_t j = 0; j < keys; ++j)
            row[j] = sum > 0.0 ? float(std::abs(row[j]) / sum) : 0.0f;
    }
    return shares;
}

float largest(const Tensor& t) {
    const auto values = t.values();
    return values.empty() ? 0.0f : *std::max_element(values.begin(), values.end());
}
} // namespace

ViolinSet violinSet(const analysis::HeadValues& values, float high) {
    ViolinSet set;
    set.grid = analysis::linearGrid(0.0f, high, kGridPoints);
    set.violins = analysis::headViolins(values, set.grid);
    set.order = analysis::headOrderByMedian(set.violins);
    return set;
}

AttentionStats analyseAttention(const Tensor& weights, const analysis::TokenMask& valid) {
    const std::optional<Tensor> shares = signedShares(weights);
    const Tensor& attention = shares ? *shares : weights;
    return violinStats(analysis::attentionEntropy(attention, valid),
                       analysis::adjacentLayerJsd(attention, valid), valid);
}

AttentionStats violinStats(const Tensor& entropy, const Tensor& adjacentJsd,
                           const analysis::TokenMask& valid) {
    AttentionStats stats;
    const auto realTokens = double(analysis::validPositions(valid).size());
    // Why ln T: no row over T keys can be more uncertain than uniform, so the axis fits any head.
    const float entropyTop =
        std::max({float(std::log(std::max(realTokens, 2.0))), largest(entropy)});
    stats.entropy = violinsOf(entropy, valid, entropyTop);
    stats.jsd = violinsOf(adjacentJsd, valid, 1.0f);
    return stats;
}

const HeadViolins& AttentionStats::violins(const Tensor& attention,
                                           const analysis::TokenMask& valid) const {
    if (!entropy.grid.empty()) return *this;
    if (!violins_)
        violins_ = std::make_shared<const HeadViolins>(analyseAttention(attention, valid));
    return *violins_;
}

const CostlyStats& AttentionStats::costly(const Tensor& weights,
                                          const analysis::TokenMask& valid) const {
    if (!costly_) {
        auto computed = std::make_shared<CostlyStats>();
        const std::optional<Tensor> shares = signedShares(weights);
        const Tensor& attention = shares ? *shares : weights;
        computed->headJsd = analysis::headJsdMatrix(attention, valid);
        computed->leafOrder = analysis::averageLinkage(computed->headJsd).leafOrder;
        computed->rollout = analysis::attentionRollout(attention, valid);
        costly_ = std::move(computed);
    }
    return *costly_;
}
} // namespace headlight::app
