// Attention over a compressed memory (catalogue A4.5, A4.3): keys and values are pooled along the
// sequence by a fixed projection P [k, T] and every query attends to the k pooled slots,
//   context = softmax(scale · Q (P K)ᵀ) (P V),   O(T·k·d), no T × T matrix.
//
//   Linformer (Wang et al. 2020a) with a zoo checkpoint's learned E, F [k, P] per layer: their
//       first T columns, those of padding zeroed; context = softmax(scale · Q (E K)ᵀ) (F V).
//   Linformer without trained E, F: E = F = P, the mean over k contiguous
//       segments (segment s holds tokens ⌊s·n/k⌋ … ⌊(s+1)·n/k⌋ − 1, so uneven n is spread evenly),
//       k = min(projected, n); the pooling projection of the Linformer paper.
//   MemoryCompressed (Liu et al. 2018) with mean pooling in place of the learned strided
//       convolution: segments of `projected` tokens (stride = kernel = projected), the last one
//       shorter, k = ⌈n / projected⌉.
//
// n counts the non-padding tokens, and segments cover only those, so padding never enters a slot
// (and with k = n the projection is the identity on valid tokens: exact softmax attention).
// Both pool over the whole sequence, so encoders only (variants/applicability.cpp refuses causal
// models). No random numbers.
//
// Outputs: probabilities = the equivalent T × T map A·F, the weight of each value token (with
// pooling, F = P and rows sum to 1 over valid keys; learned F mixes values freely, so its rows
// need not be positive nor sum to 1); no scores (the logits are T × k). Internals: "projection"
// E [k, T], "value_projection" F [k, T] (learned only) and "compressed_probabilities" [H, T, k].
#include "variants/composed_attention.h"

#include <vector>

namespace headlight::variants {
namespace {

// The positions a slot may pool: the non-padding ones (every position when all are padding, so
// that a degenerate input still has a memory).
std::vector<int64_t> keptPositions(const AttentionShape& shape) {
    std::vector<int64_t> kept;
    for (int64_t t = 0; t < shape.tokens; ++t)
        if (shape.keyMask().valid(t)) kept.push_back(t);
    if (kept.empty())
        for (int64_t t = 0; t < shape.tokens; ++t)
            kept.push_back(t);
    return kept;
}

// Segment boundaries over n kept positions: slot s covers [bounds[s], bounds[s + 1]).
std::vector<int64_t> segmentBounds(const VariantSpec& spec, int64_t n) {
    std::vector<int64_t> bounds;
    if (spec.kernel == AttentionKernel::Linformer) {
        const int64_t slots = std::min<int64_t>(spec.projected, n);
        for (int64_t s = 0; s <= slots; ++s)
            bounds.push_back(s * n / slots);
        return bounds;
    }
    for (int64_t start = 0; start < n; start += spec.projected)
        bounds.push_back(start);
    bounds.push_back(n);
    return bounds;
}

// P [k, T]: row s averages the kept positions of segment s.
Tensor poolingProjection(const VariantSpec& spec, const AttentionShape& shape) {
    const std::vector<int64_t> kept = keptPositions(shape);
    const std::vector<int64_t> bounds = segmentBounds(spec, int64_t(kept.size()));
    const int64_t slots = int64_t(bounds.size()) - 1, tokens = shape.tokens;
    Tensor projection({slots, tokens}, 0.0f);
    for (int64_t s = 0; s < slots; ++s) {
        const float weight = 1.0f / float(bounds[std::size_t(s) + 1] - bounds[std::size_t(s)]);
        for (int64_t i = bounds[std::size_t(s)]; i < bounds[std::size_t(s) + 1]; ++i)
            projection.values()[std::size_t(s * tokens + kept[std::size_t(i)])] = weight;
    }
    return projection;
}

// A learned E or F [k, P] → its first T columns, zero on padding (a padded key fills no slot).
// validateLearnedProjections (model/transformer.cpp) has checked T ≤ P.
Tensor learnedProjection(const Tensor& full, const AttentionShape& shape) {
    const int64_t slots = full.dim(0), positions = full.dim(1), tokens = shape.tokens;
    Tensor cut({slots, tokens}, 0.0f);
    for (int64_t t = 0; t < tokens; ++t) {
        if (!shape.keyMask().valid(t)) continue;
        for (int64_t s = 0; s < slots; ++s)
            cut.values()[std::size_t(s * tokens + t)] =
                full.values()[std::size_t(s * positions + t)];
    }
    return cut;
}

// P repeated once per key/value head, so one batched matmul pools every head.
Tensor perHead(const Tensor& projection, int64_t heads) {
    Tensor repeated({heads, projection.dim(0), projection.dim(1)});
    for (int64_t h = 0; h < heads; ++h)
        std::copy(projection.values().begin(), projection.values().end(),
                  repeated.values().begin() + std::ptrdiff_t(h * projection.size()));
    return repeated;
}

DeviceTensor pooled(Backend& backend, const DeviceTensor& projections, const DeviceTensor& x) {
    DeviceTensor out = backend.allocate({x.dim(0), projections.dim(1), x.dim(2)});
    backend.matmul(projections, x, false, 1.0f, out);
    return out;
}
} // namespace

AttentionOutputs compressedAttention(Backend& backend, const LayerAttention& layer,
                                     const VariantSpec& spec, const AttentionPlan& plan,
                                     const AttentionWants& wants) {
    const bool learned = layer.keyProjection != nullptr;
    const Tensor projection = learned ? learnedProjection(*layer.keyProjection, plan.shape)
                                      : poolingProjection(spec, plan.shape);
    const Tensor valueProjection =
        learned ? learnedProjection(*layer.valueProjection, plan.shape) : projection;
    const int64_t heads = layer.q.dim(0), tokens = layer.q.dim(1), slots = projection.dim(0);
    const DeviceTensor keyPooling = backend.upload(perHead(projection, layer.k.dim(0)));
    const DeviceTensor valuePooling =
        learned ? backend.upload(perHead(valueProjection, layer.v.dim(0))) : keyPooling;
    const DeviceTensor keys = pooled(backend, keyPooling, layer.k),
                       values = pooled(backend, valuePooling, layer.v);
    DeviceTensor weights = backend.allocate({heads, tokens, slots});
    backend.matmul(layer.q, keys, true, layer.scale, weights);
    backend.softmax(weights, nullptr, weights);
    AttentionOutputs out;
    out.context = backend.allocate({heads, tokens, layer.v.dim(2)});
    backend.matmul(weights, values, false, 1.0f, out.context);
    const bool wantsMaps = wants.probabilities || wants.internals;
    const DeviceTensor deviceProjection = wantsMaps ? backend.upload(projection) : DeviceTensor();
    const DeviceTensor deviceValueProjection =
        wantsMaps && learned ? backend.upload(valueProjection) : deviceProjection;
    if (wants.probabilities) {
        out.probabilities = backend.allocate({heads, tokens, tokens});
        backend.matmul(weights, deviceValueProjection, false, 1.0f, out.probabilities);
    }
    if (wants.internals) {
        out.internals["projection"] = deviceProjection;
        if (learned) out.internals["value_projection"] = deviceValueProjection;
        out.internals["compressed_probabilities"] = weights;
    }
    return out;
}
} // namespace headlight::variants
