#pragma once
// The order of a stack's residual sub-layers (docs/zoo-format.md, order.kind):
//   standard  (a f)^L: each layer's attention, then its FFN
//   macaron   (f′ a f)^L with both FFNs half steps, x + ½FFN(x) (Lu et al. 2020)
//   sandwich  a^k (af)^(L−k) f^k: the i-th a (f) runs layer i's attention (FFN) (Press et al. 2020)
// drop_ffn leaves the attention sub-layers alone (Dong et al. 2021).

#include "backend/backend.h"
#include "variants/variant_spec.h"

#include <vector>

namespace headlight::variants {

enum class SublayerKind { Attention, Ffn, FfnPre };

// One residual sub-layer of the stack: which function, and whose weights.
struct Sublayer {
    SublayerKind kind;
    int layer;
    bool endsLayer; // hidden states, early exit and captures count layers here
};

std::vector<Sublayer> sublayerOrder(const BlockSpec& block, int layers, bool dropFfn);

// Macaron's FFNs are half steps: y ← ½y there, y unchanged in the other orders.
void scaleFfnStep(Backend& backend, const BlockSpec& block, DeviceTensor& y);
} // namespace headlight::variants
