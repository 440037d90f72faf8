#pragma once
// Reversible residual layers (RevNet, Gomez et al. 2017; Reformer, Kitaev et al. 2020;
// docs/zoo-format.md, reversible): x₁ = x₂ = h, and per layer
//   y₁ = x₁ + Attn(N₁(x₂)),   y₂ = x₂ + FFN(N₂(y₁)),
// the output (y₁ + y₂)/2. Each layer's inputs follow from its outputs, x₂ = y₂ − FFN(N₂(y₁)) and
// x₁ = y₁ − Attn(N₁(x₂)); with `measure` set the largest |x − x̂| over both streams is reported
// per layer (exact in theory, float rounding in practice).

#include "backend/backend.h"
#include "tensor/tensor.h"

#include <functional>

namespace headlight::variants {

// F(N(input)) of layer `layer`'s attention (attention = true) or FFN. `inverse` marks the
// recomputation of the inputs: it captures nothing and leaves the pass's state alone.
using ReversibleBranch =
    std::function<DeviceTensor(int layer, bool attention, const DeviceTensor& input, bool inverse)>;

struct ReversibleOutcome {
    DeviceTensor out;           // [T, D]
    Tensor reconstructionError; // [L] when measured, else empty
};

ReversibleOutcome reversibleLayers(Backend& backend, int layers, const DeviceTensor& x,
                                   bool measure, const ReversibleBranch& branch);
} // namespace headlight::variants
