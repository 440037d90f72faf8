#include "variants/composed_attention.h"

#include "variants/attention_prior.h"
#include "variants/sigmoid_attention.h"
#include "variants/sink_softmax.h"
#include "variants/talking_heads.h"

#include <algorithm>
#include <limits>
#include <string>

namespace headlight::variants {
namespace {

// Scores as the fused kernel reports them: masked entries at the lowest f32.
DeviceTensor maskedScores(Backend& backend, const DeviceTensor& logits, const AttentionPlan& plan) {
    DeviceTensor scores = backend.allocate(logits.shape());
    if (!plan.deviceMask.valid()) {
        backend.copyRows(logits, 0, logits.size() / logits.shape().back(), scores, 0);
        return scores;
    }
    // s·m + (1 − m)·lowest: exact, since s·1 + 0 = s and 0 + lowest = lowest.
    const float lowest = std::numeric_limits<float>::lowest();
    DeviceTensor fill = backend.allocate(plan.deviceMask.shape());
    backend.map(plan.deviceMask, MapOp::Affine, -lowest, lowest, fill);
    backend.binary(logits, plan.deviceMask, BinaryOp::Mul, scores);
    backend.binary(scores, fill, BinaryOp::Add, scores);
    return scores;
}

// The weights of masked logits by the spec's rule: softmax, softmax with a sink, or sigmoid.
void attentionWeights(Backend& backend, const WeightRule& rule, const DeviceTensor& logits,
                      const AttentionPlan& plan, DeviceTensor& weights) {
    const DeviceTensor* mask = plan.deviceMask.valid() ? &plan.deviceMask : nullptr;
    switch (rule.kind) {
    case WeightRule::Kind::Softmax:
        backend.softmax(logits, mask, weights);
        return;
    case WeightRule::Kind::SinkSoftmax:
        sinkSoftmaxWeights(backend, rule, logits, mask, weights);
        return;
    case WeightRule::Kind::Sigmoid:
        sigmoidWeights(backend, rule, logits, mask, weights);
        return;
    }
}

// a ⊙ m_z renormalised per row (adaptive span).
void applySpan(Backend& backend, const AttentionPlan& plan, DeviceTensor& probabilities) {
    backend.binary(probabilities, plan.deviceSpan, BinaryOp::Mul, probabilities);
    const int64_t rows = probabilities.size() / probabilities.shape().back();
    DeviceTensor sums = backend.allocate({rows, 1});
    backend.reduceRows(probabilities, true, sums);
    // Why the tiny offset: a padded query whose keys all fall outside its span keeps a zero row
    // instead of 0/0.
    backend.map(sums, MapOp::Affine, 1.0f, 1e-30f, sums);
    DeviceTensor flat = probabilities.reshaped({rows, probabilities.shape().back()});
    backend.binary(flat, sums, BinaryOp::Div, flat);
}

// The sparse pattern's probabilities [H / Hp, E] as the [H, T, T] map the views show (a row
// with no key is uniform, as the kernel computes it).
DeviceTensor denseProbabilities(Backend& backend, const SparsePattern& pattern,
                                const DeviceTensor& weights, int64_t heads) {
    const Tensor w = backend.download(weights);
    const int64_t tokens = pattern.tokens, entries = pattern.entries();
    Tensor dense({heads, tokens, tokens});
    float* d = dense.values().data();
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < tokens; ++i) {
            const std::size_t row = std::size_t((h % pattern.heads) * tokens + i);
            const int32_t first = pattern.rowStart[row], end = pattern.rowStart[row + 1];
            float* out = d + (h * tokens + i) * tokens;
            if (first == end) std::fill(out, out + tokens, 1.0f / float(tokens));
            for (int32_t e = first; e < end; ++e)
                out[pattern.keys[std::size_t(e)]] =
                    w.values()[std::size_t(h / pattern.heads * entries + e)];
        }
    return backend.upload(dense);
}

// Softmax over the plan's rows of keys, with no T × T matrix unless the probabilities are wanted.
AttentionOutputs sparseSoftmaxAttention(Backend& backend, const LayerAttention& layer,
                                        const AttentionPlan& plan, const AttentionWants& wants) {
    const SparsePattern& pattern = *plan.pattern;
    const int64_t heads = plan.shape.heads;
    AttentionOutputs out;
    out.context = backend.allocate(layer.q.shape());
    DeviceTensor weights;
    if (wants.probabilities) weights = backend.allocate({heads / pattern.heads, pattern.entries()});
    backend.sparseAttention(layer.q, layer.k, layer.v, pattern, layer.scale, plan.alibiSlopes,
                            out.context, wants.probabilities ? &weights : nullptr);
    if (wants.probabilities)
        out.probabilities = denseProbabilities(backend, pattern, weights, heads);
    return out;
}

AttentionOutputs softmaxAttention(Backend& backend, const LayerAttention& layer,
                                  const VariantSpec& spec, const AttentionPlan& plan,
                                  AttentionMemory& memory, const AttentionWants& wants) {
    const int64_t heads = plan.shape.heads, tokens = plan.shape.tokens;
    AttentionOutputs out;
    DeviceTensor probabilities;
    if (reusesSharedMap(spec.prior, layer.layer, memory)) {
        probabilities = memory.sharedProbabilities;
    } else {
        DeviceTensor logits = backend.allocate({heads, tokens, tokens});
        backend.matmul(layer.q, layer.k, true, layer.scale, logits);
        applyScorePrior(backend, spec.prior, layer.layer, logits, memory);
        if (plan.deviceBias.valid()) backend.binary(logits, plan.deviceBias, BinaryOp::Add, logits);
        if (spec.talkingHeads.enabled && !spec.talkingHeads.logitsMix.empty()) {
            if (wants.internals) out.internals["premix_logits"] = logits;
            mixHeads(backend, spec.talkingHeads.logitsMix, logits);
        }
        if (wants.scores) out.scores = maskedScores(backend, logits, plan);
        probabilities = backend.allocate({heads, tokens, tokens});
        attentionWeights(backend, spec.weightRule, logits, plan, probabilities);
        if (plan.deviceSpan.valid()) applySpan(backend, plan, probabilities);
        if (spec.talkingHeads.enabled && !spec.talkingHeads.weightsMix.empty()) {
            if (wants.internals) out.internals["premix_probabilities"] = probabilities;
            mixHeads(backend, spec.talkingHeads.weightsMix, probabilities);
        }
        if (spec.prior.kind == Prior::Kind::Share) memory.sharedProbabilities = probabilities;
    }
    out.context = backend.allocate({heads, tokens, layer.v.dim(2)});
    backend.matmul(probabilities, layer.v, false, 1.0f, out.context);
    if (wants.probabilities) out.probabilities = probabilities;
    if (wants.internals && spec.prior.kind != Prior::Kind::None && memory.residualScores.valid())
        out.internals["residual_scores"] = memory.residualScores;
    return out;
}
} // namespace

AttentionOutputs attendComposed(Backend& backend, const LayerAttention& layer,
                                const VariantSpec& spec, const AttentionPlan& plan,
                                AttentionMemory& memory, const AttentionWants& wants) {
    // Why dense when scores are wanted: the dump's pre-softmax scores are a T × T map anyway, and
    // the plan keeps the dense mask for them up to kDensePlanTokens.
    if (plan.pattern && !(wants.scores && plan.deviceMask.valid())) {
        if (wants.scores)
            throw VariantError("pre-softmax scores of a sparse mask are kept up to " +
                               std::to_string(kDensePlanTokens) + " tokens: shorten the text");
        return sparseSoftmaxAttention(backend, layer, plan, wants);
    }
    switch (spec.kernel) {
    case AttentionKernel::Softmax: return softmaxAttention(backend, layer, spec, plan, memory, wants);
    case AttentionKernel::Lsh: return lshAttention(backend, layer, spec, plan, wants);
    case AttentionKernel::Favor:
    case AttentionKernel::Rfa:
    case AttentionKernel::LinearElu: return linearizedAttention(backend, layer, spec, plan, wants);
    case AttentionKernel::ProbSparse: return probSparseAttention(backend, layer, spec, plan, wants);
    case AttentionKernel::Linformer:
    case AttentionKernel::MemoryCompressed: return compressedAttention(backend, layer, spec, plan, wants);
    case AttentionKernel::Nystrom: return nystromAttention(backend, layer, spec, plan, wants);
    }
    throw VariantError("unknown attention kernel");
}
} // namespace headlight::variants
