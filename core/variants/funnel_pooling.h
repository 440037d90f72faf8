#pragma once
// The Funnel Transformer (Dai et al. 2020). The layers form blocks (BlockSpec::funnelBlocks);
// before block b > 0 the hidden sequence is mean-pooled with stride s,
//
//   pooled = P x,   P [⌈T/s⌉, T],   row i = the mean of rows s·i … s·i + s − 1
//
// (a trailing shorter group averaged alone), and that block's first attention takes its queries
// (and its residual) from the pooled rows and its keys and values from the unpooled ones
// ("pool-query-only", §2.2); the block's later layers run at the pooled length. With more than
// one block the last block's rows are up-sampled by repetition (token t reads row ⌊t / s^(B−1)⌋)
// and block 0's output is added, the paper's residual from the full-resolution layers (§2.3,
// without its two decoder layers). Pooling is a matmul and up-sampling a row gather, so every
// backend runs it. Mirrors tools/zoo/model.py.

#include "backend/backend.h"
#include "variants/cross_attention.h"
#include "variants/sublayer_order.h"

#include <functional>
#include <vector>

namespace headlight::variants {

struct FunnelLayers {
    std::vector<int> blocks; // layers per block
    int layers = 0;          // the model's (funnel_length's size)
    int stride = 2;
    bool dropFfn = false;
    // Sub-layer `sublayer` on x with the model's residual wiring.
    std::function<DeviceTensor(const Sublayer& sublayer, const DeviceTensor& x)> apply;
    // Layer `layer`'s attention sub-layer whose residual stream continues from `pooled`, its keys
    // and values read from the unpooled x.
    std::function<DeviceTensor(int layer, const DeviceTensor& pooled, const DeviceTensor& x)>
        applyPooling;
};

struct FunnelOutcome {
    DeviceTensor out; // [T, D]
    Tensor lengths;   // funnel_length [L]: each layer's sequence length
    Tensor merge;     // funnel_merge [blocks, T]: the row of block b token t was pooled into
};

// x [T, D] through the blocks; with `hidden`, each layer's output up-sampled to T rows.
FunnelOutcome runFunnel(Backend& backend, const FunnelLayers& funnel, const DeviceTensor& x,
                        std::vector<DeviceTensor>* hidden);

// The pooling attention: queries from the pooled rows [T', D], keys and values from the unpooled
// `source` [T, D]; plain softmax over a [H, T', T] map (a funnel refuses other options). Stores
// the scores and probabilities where asked (non-null).
DeviceTensor poolingAttention(Backend& backend, const CrossAttentionLayer& layer,
                              const DeviceTensor& queries, const DeviceTensor& source,
                              DeviceTensor* scores, DeviceTensor* probabilities);
} // namespace headlight::variants
