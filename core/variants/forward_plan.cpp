#include "variants/forward_plan.h"

#include "variants/applicability.h"

#include <string>

namespace headlight::variants {
namespace {

// The options that decide which depth loop runs, or that only some loops honour.
struct DepthOptions {
    bool act = false, reversible = false, recurrence = false, funnel = false, earlyExit = false;
    bool reordered = false, dropFfn = false, preAndPlain = true, gatedPost = false;
};

DepthOptions depthOptions(const VariantSpec& variant, const BlockSpec& block) {
    DepthOptions o;
    o.act = block.actSteps > 0;
    o.reversible = block.reversible;
    o.recurrence = variant.recurrence || variant.position == PositionKind::Xl;
    o.funnel = !block.funnelBlocks.empty();
    o.earlyExit = variant.earlyExit.criterion != EarlyExit::Criterion::None;
    o.reordered = block.order != BlockSpec::Order::Standard;
    o.dropFfn = variant.dropFfn;
    o.preAndPlain = block.placement == BlockSpec::Placement::Pre &&
                    block.residual == BlockSpec::Residual::Plain;
    o.gatedPost = block.residual == BlockSpec::Residual::Gtrxl &&
                  block.placement == BlockSpec::Placement::Post;
    return o;
}

struct Clash {
    bool (*holds)(const DepthOptions&);
    const char* reason;
};

// What checkApplies leaves: it already refuses recurrence and the funnel with every other loop,
// early exit and the options they cannot run (checkRecurrence, checkFunnel).
constexpr Clash kClashes[] = {
    {[](const DepthOptions& o) { return o.act && o.reversible; },
     "ACT repeats one shared layer and reversible layers run two streams through the stack; a "
     "model runs one of the two depth loops"},
    {[](const DepthOptions& o) { return o.act && o.earlyExit; },
     "early exit judges the layers of a plain stack; a Universal Transformer with ACT already "
     "halts each token with its own halting unit"},
    {[](const DepthOptions& o) { return o.reversible && o.earlyExit; },
     "early exit copies a token's state up one residual stream; reversible layers run two, so it "
     "does not combine with them"},
    {[](const DepthOptions& o) { return o.reversible && o.reordered; },
     "reversible layers pair each layer's attention with its own FFN; they do not combine with "
     "the macaron or sandwich order"},
    {[](const DepthOptions& o) { return o.reversible && o.dropFfn; },
     "reversible layers need every FFN for their second stream; they do not combine with "
     "drop_ffn"},
    {[](const DepthOptions& o) { return o.reversible && !o.preAndPlain; },
     "reversible layers add each normed sub-layer to the other stream; they need pre placement "
     "and plain residuals (not post, ReZero or GTrXL)"},
    {[](const DepthOptions& o) { return o.gatedPost; },
     "the GTrXL gate mixes x with F(N(x)), so it needs pre placement; it does not combine with "
     "post"},
};

// Why these loops: ACT runs layer 0 a token-dependent number of times, the segment loop runs each
// layer once per segment and the funnel's pooling layers attend pooled queries, so none of them
// has the one [T, d] output per head and layer that an ablation or a patch replaces.
const char* interventionClash(DepthLoop loop, bool residual) {
    switch (loop) {
    case DepthLoop::Stack:
        return nullptr;
    case DepthLoop::Reversible:
        return residual ? "reversible layers carry two residual streams; patch a head instead"
                        : nullptr;
    case DepthLoop::AdaptiveComputation:
        return "ACT repeats one layer a token-dependent number of times, so its heads have no "
               "single output to ablate or patch";
    case DepthLoop::SegmentRecurrence:
        return "segment recurrence runs each layer once per segment, so its heads have no single "
               "output over the text to ablate or patch";
    case DepthLoop::Funnel:
        return "the funnel pools the sequence between blocks, so its heads have no output over "
               "the text's positions to ablate or patch";
    }
    return nullptr;
}

std::string headName(const HeadAblationSpec& spec) {
    return "head " + std::to_string(spec.layer) + "." + std::to_string(spec.head);
}

void checkHead(const HeadAblation& ablation, const ModelSpec& model, int64_t tokens) {
    const HeadAblationSpec& s = ablation.spec;
    if (s.layer < 0 || s.layer >= model.layers)
        throw VariantError(headName(s) + ": layer " + std::to_string(s.layer) +
                           " does not exist (the model has " + std::to_string(model.layers) + ")");
    if (s.head < 0 || s.head >= model.heads)
        throw VariantError(headName(s) + ": head " + std::to_string(s.head) +
                           " does not exist (the model has " + std::to_string(model.heads) +
                           " per layer)");
    const Tensor& r = ablation.replacement;
    if (s.mode == AblationMode::CorpusMean && int64_t(r.size()) != model.headDim)
        throw VariantError(headName(s) + ": the corpus mean has " + std::to_string(r.size()) +
                           " values, the head's output " + std::to_string(model.headDim));
    if (s.mode != AblationMode::Replace) return;
    if (r.rank() != 2 || r.dim(0) != tokens || r.dim(1) != model.headDim)
        throw VariantError(headName(s) + ": the replacement output is " + r.shapeString() +
                           ", the text needs [" + std::to_string(tokens) + ", " +
                           std::to_string(model.headDim) + "] (a source text of the same length)");
}

void checkPatch(const ResidualPatch& patch, const ModelSpec& model, int64_t tokens) {
    const std::string name = "residual patch at layer " + std::to_string(patch.layer) +
                             ", position " + std::to_string(patch.position);
    if (patch.layer < 0 || patch.layer >= model.layers)
        throw VariantError(name + ": the model has " + std::to_string(model.layers) + " layers");
    if (patch.position < 0 || patch.position >= tokens)
        throw VariantError(name + ": the text has " + std::to_string(tokens) + " tokens");
    if (int64_t(patch.row.size()) != model.hidden)
        throw VariantError(name + ": the row has " + std::to_string(patch.row.size()) +
                           " values, the residual stream " + std::to_string(model.hidden));
}

void checkEdit(const ResidualEdit& edit, const ModelSpec& model) {
    if (edit.layer < 0 || edit.layer > model.layers)
        throw VariantError(edit.name + ": the model has " + std::to_string(model.layers) +
                           " layers");
    if (edit.width != model.hidden)
        throw VariantError(edit.name + " reads rows of " + std::to_string(edit.width) +
                           " values, the residual stream has " + std::to_string(model.hidden));
}

DepthLoop depthLoop(const DepthOptions& o) {
    if (o.act) return DepthLoop::AdaptiveComputation;
    if (o.recurrence) return DepthLoop::SegmentRecurrence;
    if (o.reversible) return DepthLoop::Reversible;
    if (o.funnel) return DepthLoop::Funnel;
    return DepthLoop::Stack;
}
} // namespace

ForwardPlan planForward(const VariantSpec& requested, const ModelSpec& model) {
    VariantSpec variant = requested;
    if (!variant.block) variant.block = model.zoo.block;
    checkApplies(variant, model);
    const DepthOptions options = depthOptions(variant, variant.block.value_or(BlockSpec{}));
    for (const Clash& clash : kClashes)
        if (clash.holds(options)) throw VariantError(clash.reason);
    ForwardPlan plan;
    plan.depth = depthLoop(options);
    plan.earlyExit = options.earlyExit;
    plan.attention = plan.depth == DepthLoop::SegmentRecurrence ? AttentionRoute::Segmented
                     : variant.needsComposedPath()              ? AttentionRoute::Composed
                                                                : AttentionRoute::Fused;
    // Why: Gemma's output norms, per-layer windows and rotary bases and its soft-capped scores
    // are wired into the plain stack's fused attention (model/transformer.cpp) only.
    if (model.sandwichNorms &&
        (plan.depth != DepthLoop::Stack || plan.attention != AttentionRoute::Fused))
        throw VariantError("Gemma's sandwich norms, per-layer windows and soft-capped attention "
                           "run in the plain stack with standard attention only; this variant "
                           "changes the depth loop or the attention");
    return plan;
}

ForwardPlan planForward(const VariantSpec& variant, const ModelSpec& model,
                        Intervention intervention, int64_t tokens) {
    ForwardPlan plan = planForward(variant, model);
    if (intervention.empty()) return plan;
    const bool residual = !intervention.residuals.empty() || !intervention.edits.empty();
    if (const char* clash = interventionClash(plan.depth, residual)) throw VariantError(clash);
    for (const HeadAblation& head : intervention.heads)
        checkHead(head, model, tokens);
    for (const ResidualPatch& patch : intervention.residuals)
        checkPatch(patch, model, tokens);
    for (const ResidualEdit& edit : intervention.edits)
        checkEdit(edit, model);
    plan.intervention = std::move(intervention);
    return plan;
}
} // namespace headlight::variants
