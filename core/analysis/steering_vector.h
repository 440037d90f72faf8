#pragma once
// Steering vectors: one direction v added to the residual stream at one point, at every position,
// times a strength α:  x' = x + α·v  (Turner et al. 2023, "Activation Addition"; llama.cpp's
// control vectors add theirs the same way to the output of a block).
//
// Difference of means (Rimsky et al. 2024, "Steering Llama 2 via Contrastive Activation
// Addition", which reads each prompt's last token):
//   v = (1/|P|) Σ_{p∈P} x_p − (1/|N|) Σ_{n∈N} x_n
// with x_t the residual stream at the hook at the last position of text t.

#include "analysis/sae_hook.h"
#include "tensor/tensor.h"
#include "variants/intervention.h"

#include <string>
#include <vector>

namespace headlight::analysis {

// The last row of each of `positive` and `negative` (each [T, d], the hook's activations of one
// text) averaged per set, the second mean subtracted. Throws std::invalid_argument for an empty
// set or rows of different widths.
Tensor differenceOfMeans(const std::vector<Tensor>& positive, const std::vector<Tensor>& negative);

// x' = x + strength·direction at residual stream `stream` (the stream entering that layer; the
// layer count: the last block's output before the final norm); `name` for refusals.
variants::ResidualEdit steeringEdit(const Tensor& direction, float strength, int stream,
                                    const std::string& name);
} // namespace headlight::analysis
