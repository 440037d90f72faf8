#include "variants/applicability.h"

#include <cmath>
#include <string>

namespace headlight::variants {
namespace {

void checkMix(const std::vector<float>& mix, int heads, const char* which) {
    if (!mix.empty() && int64_t(mix.size()) != int64_t(heads) * heads)
        throw VariantError(std::string("talking heads: the ") + which + " mix is " +
                           std::to_string(int(std::sqrt(double(mix.size())))) + " × " +
                           std::to_string(int(std::sqrt(double(mix.size())))) +
                           " but this model has " + std::to_string(heads) + " heads");
}
const char* kernelName(AttentionKernel kernel) {
    switch (kernel) {
    case AttentionKernel::Softmax:
        return "softmax";
    case AttentionKernel::Lsh:
        return "LSH";
    case AttentionKernel::Favor:
        return "FAVOR+";
    case AttentionKernel::Rfa:
        return "RFA";
    case AttentionKernel::LinearElu:
        return "linear (elu + 1)";
    case AttentionKernel::ProbSparse:
        return "ProbSparse";
    case AttentionKernel::Linformer:
        return "Linformer";
    case AttentionKernel::MemoryCompressed:
        return "memory-compressed";
    case AttentionKernel::Nystrom:
        return "Nyström";
    }
    return "this";
}

// The approximate kernels never form the T × T score matrix, so options acting on it would be
// silently dropped: refuse them instead.
void checkScoreOptions(const VariantSpec& variant) {
    if (variant.kernel == AttentionKernel::Softmax) return;
    const char* option = variant.mask                              ? "a sparse mask"
                         : variant.prior.kind != Prior::Kind::None ? "an attention prior"
                         : variant.span.enabled                    ? "an adaptive span"
                         : variant.talkingHeads.enabled            ? "talking heads"
                         : variant.position == PositionKind::Alibi ? "ALiBi"
                         : variant.weightRule.kind != WeightRule::Kind::Softmax
                             ? "an attention rule (sink softmax, sigmoid)"
                             : nullptr;
    if (option)
        throw VariantError(std::string(kernelName(variant.kernel)) +
                           " attention never forms the score matrix that " + option +
                           " acts on; use it with the softmax kernel");
}
bool rotary(const VariantSpec& variant, const ModelSpec& model) {
    const bool rotaryCheckpoint = model.positions == PositionsKind::Rotary;
    return variant.position == PositionKind::Rope ||
           (variant.position == PositionKind::Checkpoint && rotaryCheckpoint);
}

// What Transformer-XL's segment loop (variants/transformer_xl_recurrence.cpp) cannot run with:
// options acting on a whole-sequence T × T map, and depths or internals other than a plain stack's.
const char* recurrenceClash(const VariantSpec& v, const ModelSpec& model) {
    if (v.kernel != AttentionKernel::Softmax) return "an approximate attention kernel";
    if (v.mask) return "a sparse mask";
    if (v.prior.kind != Prior::Kind::None) return "an attention prior";
    if (v.span.enabled) return "an adaptive span";
    if (v.talkingHeads.enabled) return "talking heads";
    if (v.weightRule.kind != WeightRule::Kind::Softmax)
        return "an attention rule (sink softmax, sigmoid)";
    if (v.position == PositionKind::Alibi || v.position == PositionKind::T5)
        return "biased positions (ALiBi, T5)";
    if (rotary(v, model)) return "rotary positions";
    if (v.earlyExit.criterion != EarlyExit::Criterion::None) return "early exit";
    if (v.block && (v.block->actSteps > 0 || v.block->reversible || v.block->experts > 0))
        return "ACT, reversible layers or experts";
    return nullptr;
}

void checkRecurrence(const VariantSpec& variant, const ModelSpec& model) {
    if (variant.position == PositionKind::Xl && model.architecture != Architecture::Headlight)
        throw VariantError(
            "Transformer-XL relative positions need the W_R, u and v a zoo checkpoint was trained "
            "with; on " +
            std::string(architectureName(model.architecture)) +
            " use recurrence alone (absolute positions continue into the memory)");
    if (!variant.recurrence && variant.position != PositionKind::Xl) return;
    if (!model.causal)
        throw VariantError(
            "Transformer-XL recurrence is a language-model method (each segment reads earlier ones "
            "only), and " +
            std::string(architectureName(model.architecture)) + " is not causal");
    if (const char* clash = recurrenceClash(variant, model))
        throw VariantError(
            std::string(
                "Transformer-XL recurrence runs plain softmax attention segment by segment; "
                "it does not combine with ") +
            clash);
}

// What the Funnel Transformer's pooled stack (variants/funnel_pooling.cpp) cannot run with:
// options that build a T × T map or per-token state for the input length, positions applied
// inside attention (queries and keys no longer share positions), and other depth loops.
const char* funnelClash(const VariantSpec& v) {
    if (v.kernel != AttentionKernel::Softmax) return "an approximate attention kernel";
    if (v.mask) return "a sparse mask";
    if (v.prior.kind != Prior::Kind::None) return "an attention prior";
    if (v.span.enabled) return "an adaptive span";
    if (v.talkingHeads.enabled) return "talking heads";
    if (v.weightRule.kind != WeightRule::Kind::Softmax)
        return "an attention rule (sink softmax, sigmoid)";
    if (v.position != PositionKind::Learned && v.position != PositionKind::Sinusoidal &&
        v.position != PositionKind::None && v.position != PositionKind::Checkpoint)
        return "positions applied inside attention (rope, alibi, t5, xl)";
    if (v.earlyExit.criterion != EarlyExit::Criterion::None) return "early exit";
    if (v.recurrence) return "segment recurrence";
    const BlockSpec& b = *v.block;
    if (b.order != BlockSpec::Order::Standard) return "the macaron or sandwich order";
    if (b.actSteps > 0 || b.reversible || b.experts > 0) return "ACT, reversible layers or experts";
    return nullptr;
}
} // namespace

void checkFunnel(const VariantSpec& variant, const ModelSpec& model) {
    if (!variant.block || variant.block->funnelBlocks.empty()) return;
    const std::vector<int>& blocks = variant.block->funnelBlocks;
    int layers = 0;
    for (int b : blocks)
        layers += b;
    if (layers != model.layers)
        throw VariantError("funnel: the blocks hold " + std::to_string(layers) +
                           " layers but the model has " + std::to_string(model.layers));
    if (model.causal)
        throw VariantError("funnel: pooling averages neighbouring tokens, so a query would see the "
                           "future; the Funnel Transformer is an encoder (no is_decoder)");
    if (const char* clash = funnelClash(variant))
        throw VariantError(std::string("funnel: the pooled stack runs softmax attention on "
                                       "rectangular maps; it does not combine with ") +
                           clash);
}

void checkApplies(const VariantSpec& variant, const ModelSpec& model) {
    const bool zoo = model.architecture == Architecture::Headlight;
    if (variant.block && !zoo)
        throw VariantError("norm, order, ffn, t5, act, reversible and funnel describe how a zoo "
                           "checkpoint's trained weights "
                           "are wired; they cannot be toggled on " +
                           std::string(architectureName(model.architecture)));
    if (variant.position == PositionKind::T5 && !zoo)
        throw VariantError("T5 relative position buckets need a trained bias table, which only a zoo checkpoint "
                           "trained with them has");
    const bool compresses = variant.kernel == AttentionKernel::Linformer ||
                            variant.kernel == AttentionKernel::MemoryCompressed;
    if (compresses && model.causal)
        throw VariantError(
            std::string(variant.kernel == AttentionKernel::Linformer ? "Linformer"
                                                                     : "memory-compressed") +
            " attention pools keys across the whole sequence, so every query would see future "
            "tokens; it runs on encoders (BERT family) only, and " +
            architectureName(model.architecture) + " is causal");
    // Why: landmarks average queries and keys over the whole sequence, so every query would see
    // future tokens (Nyströmformer is an encoder method).
    if (variant.kernel == AttentionKernel::Nystrom && model.causal)
        throw VariantError("Nyström attention averages landmarks over the whole sequence, so every "
                           "query would see "
                           "future tokens; it runs on encoders (BERT family) only, and " +
                           std::string(architectureName(model.architecture)) + " is causal");
    checkScoreOptions(variant);
    // Why: the span renormalises each row to sum 1, which would undo the weights the rule gives.
    if (variant.span.enabled && variant.weightRule.kind != WeightRule::Kind::Softmax)
        throw VariantError("an adaptive span renormalises each row of weights to sum 1, which "
                           "undoes a sink softmax or sigmoid rule; use one or the other");
    checkRecurrence(variant, model);
    checkFunnel(variant, model);
    checkMix(variant.talkingHeads.logitsMix, model.heads, "logits");
    checkMix(variant.talkingHeads.weightsMix, model.heads, "weights");
    const auto criterion = variant.earlyExit.criterion;
    const bool readsLogits =
        criterion != EarlyExit::Criterion::None && criterion != EarlyExit::Criterion::Saturation;
    if (readsLogits && !(model.causal && model.tieEmbeddings))
        throw VariantError(
            "early exit by entropy, patience or softmax response reads every layer through the "
            "model's tied LM head, which " +
            std::string(architectureName(model.architecture)) +
            " does not have here; use the saturation criterion");
    if (variant.knn && !(model.causal && model.tieEmbeddings))
        throw VariantError("kNN-LM mixes in a next-token distribution read through a causal model's tied LM head, "
                           "which " + std::string(architectureName(model.architecture)) + " does not have here");
    if (variant.kernel == AttentionKernel::Lsh && variant.lshChunk < 1)
        throw VariantError("LSH attention needs a chunk of at least one token");
}
} // namespace headlight::variants
