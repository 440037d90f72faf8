#pragma once
// ForwardPlan: what one forward pass runs, chosen once from the model and the variant before any
// op is recorded: the depth loop that carries the hidden state through the layers, and the route
// every whole-sequence attention takes. The loops are mutually exclusive, and each runs only the
// options it knows, so planForward refuses (with a one-line reason) every combination no loop can
// run, rather than letting one loop silently ignore an option.

#include "model/model_spec.h"
#include "variants/intervention.h"
#include "variants/variant_spec.h"

namespace headlight::variants {

enum class DepthLoop {
    Stack,               // the sub-layers in their order, one after another (early exit here only)
    AdaptiveComputation, // Universal Transformer: layer 0 repeated with ACT halting
    Reversible,          // RevNet: two residual streams
    SegmentRecurrence,   // Transformer-XL: the stack segment by segment, with memories
    Funnel,              // blocks with the sequence mean-pooled between them
};

enum class AttentionRoute {
    Fused,     // Backend::attention
    Composed,  // variants::attendComposed: an option acts on the scores or replaces the kernel
    Segmented, // queries from the segment, keys from [compressed | memory | segment]
};
// The funnel's pooling layers (queries pooled, keys not) are run by the Funnel loop itself; its
// other layers take the Fused route.

struct ForwardPlan {
    DepthLoop depth = DepthLoop::Stack;
    AttentionRoute attention = AttentionRoute::Fused;
    bool earlyExit = false; // only with DepthLoop::Stack
    Intervention intervention; // head ablations and patches the pass applies (intervention.h)
};

// `variant` is the pass's effective variant, or a request: without a block it is judged with the
// model's own (a zoo checkpoint's wiring). Runs checkApplies first; throws VariantError with the
// reason.
ForwardPlan planForward(const VariantSpec& variant, const ModelSpec& model);
// The same plan carrying `intervention` for a text of `tokens` tokens, after checking it: heads
// and layers in range, replacement tensors [tokens, headDim], patched rows [hidden] at a position
// of the text, and a loop whose heads have one output per layer (not ACT's repeated layer, the
// segment or funnel loops); throws VariantError with the reason.
ForwardPlan planForward(const VariantSpec& variant, const ModelSpec& model,
                        Intervention intervention, int64_t tokens);
} // namespace headlight::variants
