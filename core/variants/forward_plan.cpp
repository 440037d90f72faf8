#include "variants/forward_plan.h"

#include "variants/applicability.h"

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
} // namespace headlight::variants
