#pragma once
// AttentionPlan: what every layer's composed attention shares within one forward pass, built once
// on the host and uploaded once: the effective mask (the nominal sparse pattern ∧ causality ∧ the
// sliding window ∧ padding), the additive position/prior bias, and the adaptive-span ramps.

#include <cstdint>
#include <optional>
#include <vector>

#include "backend/backend.h"
#include "backend/key_mask.h"
#include "tensor/tensor.h"
#include "variants/variant_spec.h"

namespace headlight::variants {

// The attention geometry of a model, as the variants need it.
struct AttentionShape {
    int heads = 0, kvHeads = 0, headDim = 0;
    int64_t tokens = 0;
    bool causal = false;
    int slidingWindow = 0;
    std::vector<uint8_t> keyValid; // [T] or empty
    Tensor t5Table;                // [buckets, H]: a zoo model's trained T5 bias, when it has one
    int t5Buckets = 32, t5MaxDistance = 128;

    KeyMask keyMask() const { return {causal, slidingWindow, keyValid}; }
};

// Up to this many tokens the plan also keeps the dense masks and biases for the views and the
// dump; above it a sparse pattern exists only as rows of keys (no T × T matrix is built).
constexpr int64_t kDensePlanTokens = 1024;

struct AttentionPlan {
    AttentionShape shape;
    // Softmax attention over a sparse mask with no other dense term (no residual prior, span,
    // talking heads or T5 bias) runs as Backend::sparseAttention over these rows of keys.
    std::optional<SparsePattern> pattern;
    std::vector<float> alibiSlopes; // [H] with the pattern under ALiBi, else empty
    Tensor mask;                    // [Hm, T, T], 1 = allowed; empty when every key is allowed
    DeviceTensor deviceMask;
    Tensor nominalMask; // [Hm, T, T] the sparse preset alone (for the sparsity view); may be empty
    Tensor bias;        // [Hb, T, T] added to the scores (ALiBi, Gaussian prior); may be empty
    DeviceTensor deviceBias;
    Tensor span;        // [H, T, T] adaptive-span soft mask m_z; may be empty
    DeviceTensor deviceSpan;
};

AttentionPlan planAttention(Backend& backend, const AttentionShape& shape, const VariantSpec& spec);
} // namespace headlight::variants
