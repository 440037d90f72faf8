#include "attention_stats.h"

#include "analysis/divergence.h"
#include "analysis/rollout.h"

#include <algorithm>
#include <cmath>

namespace headlight::app {
namespace {

constexpr int64_t kGridPoints = 128;

ViolinSet violinsOf(const Tensor& perToken, const analysis::TokenMask& valid, float high) {
    return violinSet(analysis::collectHeadValues(perToken, valid), high);
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

AttentionStats analyseAttention(const Tensor& attention, const analysis::TokenMask& valid) {
    AttentionStats stats;
    const auto realTokens = double(analysis::validPositions(valid).size());
    const Tensor entropy = analysis::attentionEntropy(attention, valid);
    // Why ln T: no row over T keys can be more uncertain than uniform, so the axis fits any head.
    const float entropyTop =
        std::max({float(std::log(std::max(realTokens, 2.0))), largest(entropy)});
    stats.entropy = violinsOf(entropy, valid, entropyTop);
    stats.jsd = violinsOf(analysis::adjacentLayerJsd(attention, valid), valid, 1.0f);
    return stats;
}

const CostlyStats& AttentionStats::costly(const Tensor& attention,
                                          const analysis::TokenMask& valid) const {
    if (!costly_) {
        auto computed = std::make_shared<CostlyStats>();
        computed->headJsd = analysis::headJsdMatrix(attention, valid);
        computed->leafOrder = analysis::averageLinkage(computed->headJsd).leafOrder;
        computed->rollout = analysis::attentionRollout(attention, valid);
        costly_ = std::move(computed);
    }
    return *costly_;
}
} // namespace headlight::app
