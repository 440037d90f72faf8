#include "variants/composed_attention.h"

#include <limits>

#include "variants/attention_prior.h"
#include "variants/talking_heads.h"

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

AttentionOutputs softmaxAttention(Backend& backend, const LayerAttention& layer, const VariantSpec& spec,
                                  const AttentionPlan& plan, AttentionMemory& memory, const AttentionWants& wants) {
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
        backend.softmax(logits, plan.deviceMask.valid() ? &plan.deviceMask : nullptr, probabilities);
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

AttentionOutputs attendComposed(Backend& backend, const LayerAttention& layer, const VariantSpec& spec,
                                const AttentionPlan& plan, AttentionMemory& memory, const AttentionWants& wants) {
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
