#pragma once
// AttentionPlan: what every layer's composed attention shares within one forward pass, built once
// on the host and uploaded once: the effective mask (the nominal sparse pattern ∧ causality ∧ the
// sliding window ∧ padding), the additive position/prior bias, and the adaptive-span ramps.

#include <cstdint>
#include <vector>

#include "backend/backend.h"
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
};

struct AttentionPlan {
    AttentionShape shape;
    Tensor mask;        // [Hm, T, T], 1 = allowed; empty when every key is allowed
    DeviceTensor deviceMask;
    Tensor nominalMask; // [Hm, T, T] the sparse preset alone (for the sparsity view); may be empty
    Tensor bias;        // [Hb, T, T] added to the scores (ALiBi, Gaussian prior); may be empty
    DeviceTensor deviceBias;
    Tensor span;        // [H, T, T] adaptive-span soft mask m_z; may be empty
    DeviceTensor deviceSpan;
};

AttentionPlan planAttention(Backend& backend, const AttentionShape& shape, const VariantSpec& spec);
} // namespace headlight::variants
