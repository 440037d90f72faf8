// Depth: the loop the ForwardPlan names. The plain stack (with early exit) lives here; the other
// loops are core/variants/adaptive_computation_time.cpp, reversible_layers.cpp,
// transformer_xl_recurrence.cpp and funnel_pooling.cpp, each handed this model's sub-layers.
#include "model/transformer.h"
#include "variants/funnel_pooling.h"
#include "variants/reversible_layers.h"

#include <algorithm>

namespace headlight {

int TransformerModel::capturedLayers() const { return block_.actSteps > 0 ? block_.actSteps : spec_.layers; }

std::vector<TransformerModel::Sublayer>
TransformerModel::sublayerOrder(const variants::VariantSpec& variant) const {
    return variants::sublayerOrder(block_, int(layers_.size()), variant.dropFfn);
}

DeviceTensor TransformerModel::runDepth(DeviceTensor x, Pass& pass,
                                        std::vector<PendingCapture>& pending,
                                        std::vector<DeviceTensor>* hidden,
                                        std::optional<variants::ExitTracker>& exits,
                                        Trace& trace) const {
    switch (pass.plan.depth) {
    case variants::DepthLoop::Stack:
        return runStack(x, pass, pending, hidden, exits);
    case variants::DepthLoop::AdaptiveComputation:
        return runAdaptiveComputation(x, pass, pending, trace);
    case variants::DepthLoop::Reversible:
        return runReversible(x, pass, pending, trace);
    case variants::DepthLoop::SegmentRecurrence:
        return runSegments(x, pass, pending, hidden, trace);
    case variants::DepthLoop::Funnel:
        return runFunnel(x, pass, pending, hidden, trace);
    }
    return x;
}

DeviceTensor TransformerModel::runStack(DeviceTensor x, Pass& pass,
                                        std::vector<PendingCapture>& pending,
                                        std::vector<DeviceTensor>* hidden,
                                        std::optional<variants::ExitTracker>& exits) const {
    DeviceTensor layerInput = x;
    int entered = -1; // the layer whose residual stream the plan's patches have written
    for (const Sublayer& sublayer : sublayerOrder(pass.variant)) {
        if (sublayer.layer < pass.firstLayer) continue; // kept from a cached pass
        if (sublayer.layer != entered) {
            entered = sublayer.layer;
            if (pass.kept) pass.kept->layerInputs[std::size_t(entered)].push_back(x);
            x = variants::patchResidual(backend_, pass.plan.intervention, entered, x);
            x = variants::editResidual(backend_, pass.plan.intervention, entered, x);
            layerInput = x;
        }
        PendingCapture& capture = pending[std::size_t(sublayer.layer)];
        if (pass.queriesKeysOnly && sublayer.layer == pass.lastLayer &&
            sublayer.kind == SublayerKind::Attention) {
            queriesKeys(layers_[std::size_t(sublayer.layer)], sublayer.layer,
                        sublayerInput(sublayer, x), pass, capture);
            ++pass.layersRun;
            break;
        }
        x = spec_.parallelResidual && sublayer.kind == SublayerKind::Ffn
                ? applyParallelFfn(sublayer, layerInput, x, pass, capture)
                : applySublayer(sublayer, x, pass, capture);
        if (!sublayer.endsLayer) continue;
        if (exits) trackExits(*exits, sublayer.layer, layerInput, x);
        if (hidden) hidden->push_back(x);
        layerInput = x;
        ++pass.layersRun;
        if (sublayer.layer == pass.lastLayer) break;
        if (pass.control) pass.control->afterLayer(sublayer.layer + 1, spec_.layers);
    }
    // The last block's output, before the final norm: an edit at the last hook_resid_post.
    if (entered == spec_.layers - 1 && pass.lastLayer < 0)
        x = variants::editResidual(backend_, pass.plan.intervention, spec_.layers, x);
    return x;
}

// Step t runs layer 0's sub-layers in their order and counts as attention layer t − 1.
DeviceTensor TransformerModel::runAdaptiveComputation(const DeviceTensor& x, Pass& pass,
                                                      std::vector<PendingCapture>& pending,
                                                      Trace& trace) const {
    const std::vector<Sublayer> order = sublayerOrder(pass.variant);
    const auto step = [&](int t, DeviceTensor state) {
        for (const Sublayer& sublayer : order)
            state = applySublayer(sublayer, state, pass, pending[std::size_t(t)]);
        return state;
    };
    variants::AdaptiveOutcome outcome = variants::adaptiveComputation(backend_, act_, x, step);
    // Only the steps that ran are layers of the trace (every token may halt before max_steps).
    pending.resize(std::size_t(outcome.steps));
    trace.layers.resize(std::size_t(outcome.steps));
    trace.internals.merge(outcome.internals);
    return outcome.out;
}

// Each branch is its sub-layer's F(N(·)); the inverse recomputation captures nothing and must not
// advance the attention prior's memory.
DeviceTensor TransformerModel::runReversible(const DeviceTensor& x, Pass& pass,
                                             std::vector<PendingCapture>& pending,
                                             Trace& trace) const {
    const auto branch = [&](int l, bool attention, const DeviceTensor& input, bool inverse) {
        const Sublayer sublayer{attention ? SublayerKind::Attention : SublayerKind::Ffn, l, true};
        DeviceTensor normed = backend_.allocate(input.shape());
        normalize(sublayerNorm(sublayer), input, normed);
        if (!inverse) return sublayerFunction(sublayer, normed, pass, pending[std::size_t(l)]);
        PendingCapture scratch;
        const variants::AttentionMemory kept = pass.memory;
        DeviceTensor y = sublayerFunction(sublayer, normed, pass, scratch);
        pass.memory = kept;
        return y;
    };
    variants::ReversibleOutcome outcome =
        variants::reversibleLayers(backend_, spec_.layers, x, pass.wants.internals, branch);
    if (pass.wants.internals) trace.internals["reconstruction_error"] = outcome.reconstructionError;
    return outcome.out;
}

// The stack segment by segment; attention takes the Segmented route while pass.segments is set.
DeviceTensor TransformerModel::runSegments(const DeviceTensor& x, Pass& pass,
                                           std::vector<PendingCapture>& pending,
                                           std::vector<DeviceTensor>* hidden, Trace& trace) const {
    variants::Segments segments;
    segments.shape = pass.variant.recurrence.value_or(variants::Recurrence{int(x.dim(0)), 0, 0, 2});
    pass.segments = &segments;
    std::optional<variants::ExitTracker> noExits;
    const auto stack = [&](const DeviceTensor& segment, std::vector<DeviceTensor>* states) {
        return runStack(segment, pass, pending, states, noExits);
    };
    variants::SegmentOutcome outcome = variants::runSegments(backend_, segments, x, stack, hidden);
    pass.segments = nullptr;
    trace.internals["segment"] = outcome.segment;
    return outcome.out;
}

// The pooling sub-layer's keys and values pass through the same norm as its queries where the
// sub-layer reads N(·).
DeviceTensor TransformerModel::runFunnel(const DeviceTensor& x, Pass& pass,
                                         std::vector<PendingCapture>& pending,
                                         std::vector<DeviceTensor>* hidden, Trace& trace) const {
    variants::FunnelLayers funnel{block_.funnelBlocks,  spec_.layers, block_.funnelStride,
                                  pass.variant.dropFfn, {},           {}};
    funnel.apply = [&](const Sublayer& sublayer, const DeviceTensor& input) {
        return applySublayer(sublayer, input, pass, pending[std::size_t(sublayer.layer)]);
    };
    funnel.applyPooling = [&](int layer, const DeviceTensor& pooled, const DeviceTensor& input) {
        const Sublayer sublayer{SublayerKind::Attention, layer, false};
        PendingCapture& capture = pending[std::size_t(layer)];
        const variants::CrossAttentionLayer cross =
            crossAttention(layers_[std::size_t(layer)], false);
        return residual(sublayer, pooled, [&](const DeviceTensor& queries) {
            const DeviceTensor keys = sublayerInput(sublayer, input);
            return variants::poolingAttention(
                backend_, cross, queries, keys, capture.wantScores ? &capture.scores : nullptr,
                capture.wantProbabilities ? &capture.probabilities : nullptr);
        });
    };
    variants::FunnelOutcome outcome = variants::runFunnel(backend_, funnel, x, hidden);
    trace.internals["funnel_length"] = outcome.lengths;
    trace.internals["funnel_merge"] = outcome.merge;
    return outcome.out;
}

// Why only the plain stack without early exit: the other loops (ACT, reversible streams,
// segments, the funnel) and the exits carry state across the whole depth; a captured layer
// there may depend on layers after it, or its trace on the loop finishing.
int TransformerModel::lastLayerNeeded(const CaptureRequest& capture,
                                      const variants::ForwardPlan& plan) const {
    if (capture.finalState || capture.logits || capture.hiddenStates || capture.layers.empty() ||
        plan.depth != variants::DepthLoop::Stack || plan.earlyExit)
        return -1;
    return *std::max_element(capture.layers.begin(), capture.layers.end());
}
} // namespace headlight
