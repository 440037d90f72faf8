#include "variants/attention_plan.h"

#include "variants/adaptive_span.h"
#include "variants/position_bias.h"
#include "variants/sparse_mask.h"

#include <cmath>
#include <cstdlib>

namespace headlight::variants {
namespace {

// The nominal pattern restricted by causality, the sliding window and padding: [Hm, T, T].
Tensor effectiveMask(const AttentionShape& shape, const Tensor& nominal) {
    const int64_t t = shape.tokens;
    Tensor mask = nominal.empty() ? Tensor({1, t, t}, 1.0f) : nominal;
    const int64_t maskHeads = mask.shape()[0];
    float* m = mask.values().data();
    const KeyMask rule = shape.keyMask();
    for (int64_t h = 0; h < maskHeads; ++h)
        for (int64_t i = 0; i < t; ++i)
            for (int64_t j = 0; j < t; ++j)
                if (!rule.allows(i, j)) m[(h * t + i) * t + j] = 0.0f;
    return mask;
}

bool restricts(const AttentionShape& shape) {
    bool padding = false;
    for (uint8_t valid : shape.keyValid) padding = padding || !valid;
    return shape.causal || shape.slidingWindow > 0 || padding;
}

// Local prior −(i − j)² / (2σ²) (Yang et al. 2018 with centres p_i = i; Lin et al. 2021, A Survey of Transformers, Eq. 20).
Tensor gaussianPrior(int64_t tokens, float sigma) {
    Tensor prior({1, tokens, tokens});
    float* p = prior.values().data();
    for (int64_t i = 0; i < tokens; ++i)
        for (int64_t j = 0; j < tokens; ++j) *p++ = -float((i - j) * (i - j)) / (2.0f * sigma * sigma);
    return prior;
}

Tensor additiveBias(const AttentionShape& shape, const VariantSpec& spec) {
    Tensor bias;
    if (spec.position == PositionKind::Alibi) bias = alibiBias(shape.heads, shape.tokens);
    if (spec.position == PositionKind::T5)
        bias = t5Bias(shape.t5Table, shape.tokens, !shape.causal, shape.t5Buckets, shape.t5MaxDistance);
    if (spec.prior.kind != Prior::Kind::Gaussian) return bias;
    const Tensor prior = gaussianPrior(shape.tokens, spec.prior.sigma);
    if (bias.empty()) return prior;
    const std::size_t period = prior.size();
    for (std::size_t i = 0; i < bias.size(); ++i) bias.values()[i] += prior.values()[i % period];
    return bias;
}
// Whether the composed softmax path can run over rows of keys: every term it adds is either
// per pair and cheap (ALiBi) or absent, and the weights are the plain softmax.
bool runsSparse(const VariantSpec& spec) {
    return spec.mask && spec.kernel == AttentionKernel::Softmax &&
           spec.prior.kind == Prior::Kind::None && !spec.span.enabled &&
           !spec.talkingHeads.enabled && spec.weightRule.kind == WeightRule::Kind::Softmax &&
           spec.position != PositionKind::T5;
}

SparsePattern sparsePattern(const AttentionShape& shape, const SparseMask& mask) {
    const KeyMask rule = shape.keyMask();
    const auto keep = [&rule](int64_t i, int64_t j) { return rule.allows(i, j); };
    return buildSparsePattern(mask, shape.tokens, shape.heads, keep);
}
} // namespace

AttentionPlan planAttention(Backend& backend, const AttentionShape& shape, const VariantSpec& spec) {
    AttentionPlan plan;
    plan.shape = shape;
    if (runsSparse(spec)) {
        plan.pattern = sparsePattern(shape, *spec.mask);
        if (spec.position == PositionKind::Alibi) plan.alibiSlopes = alibiSlopes(shape.heads);
        if (shape.tokens > kDensePlanTokens) return plan;
    }
    if (spec.mask) plan.nominalMask = buildSparseMask(*spec.mask, shape.tokens, shape.heads);
    if (spec.mask || restricts(shape)) {
        plan.mask = effectiveMask(shape, plan.nominalMask);
        plan.deviceMask = backend.upload(plan.mask);
    }
    plan.bias = additiveBias(shape, spec);
    if (!plan.bias.empty()) plan.deviceBias = backend.upload(plan.bias);
    if (spec.span.enabled) {
        plan.span = spanMask(spec.span, shape.heads, shape.tokens);
        plan.deviceSpan = backend.upload(plan.span);
    }
    return plan;
}
} // namespace headlight::variants
