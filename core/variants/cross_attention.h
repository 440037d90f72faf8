#pragma once
// Softmax attention whose queries and keys come from different rows, as the Transformer-XL
// segment loop (queries from the segment, keys from memory and segment) and the funnel's pooling
// layers (queries pooled, keys not) run it:
//
//   P = softmax(scale · q kᵀ + bias, mask) per head,   out = W_o · merge_heads(P v)
//
// The layer's weights stay the model's: it hands over its projections as functions.

#include "backend/backend.h"

#include <functional>

namespace headlight::variants {

struct CrossProjection {
    DeviceTensor q;      // [S, H·d], not split: Transformer-XL adds u, v to it
    DeviceTensor kh, vh; // [Hkv, K, d]
};

struct CrossAttentionLayer {
    int heads = 0, headDim = 0;
    float scale = 1.0f;
    // q from `queries` [S, D]; k and v from `source` [K, D], split into heads.
    std::function<CrossProjection(const DeviceTensor& queries, const DeviceTensor& source)> project;
    // P [H, S, K] · vh, heads merged, the output projection W_o → [S, D].
    std::function<DeviceTensor(const DeviceTensor& probabilities, const DeviceTensor& vh)> output;
    // Transformer-XL: W_R applied to rows [n, D] → [n, H·d], and the biases u, v [1, H·d]
    // (empty and invalid without xl positions).
    std::function<DeviceTensor(const DeviceTensor& rows)> relative;
    DeviceTensor u, v;
};

// scale · q kᵀ per head: q [S, H·d], kh [Hkv, K, d] → [H, S, K].
DeviceTensor headScores(Backend& backend, const CrossAttentionLayer& layer, const DeviceTensor& q,
                        const DeviceTensor& kh);
} // namespace headlight::variants
