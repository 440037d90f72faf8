#pragma once
// Steering vectors: one direction v added to the residual stream at one point, at every position,
// times a strength α:  x' = x + α·v  (Turner et al. 2023, "Activation Addition"; llama.cpp's
// control vectors add theirs the same way to the output of a block).
//
// Difference of means (Rimsky et al. 2024, "Steering Llama 2 via Contrastive Activation
// Addition", which reads each prompt's last token):
//   v = (1/|P|) Σ_{p∈P} x_p − (1/|N|) Σ_{n∈N} x_n
// with x_t the residual stream at the hook at the last position of text t.
//
// Principal components (repeng's read_representations, vgel/repeng extract.py; Zou et al. 2023,
// "Representation Engineering"), on texts paired by their order (positive i with negative i):
//   pca-diff:   rows x_{p_i} − x_{n_i}
//   pca-center: rows x_{p_i} − c_i and x_{n_i} − c_i, c_i = (x_{p_i} + x_{n_i}) / 2
//   v = the first principal component of those rows (centred by their mean, unit length, as
//       sklearn's PCA(n_components=1) gives it), negated when more pairs project p_i below n_i
//       than above it. On a tie repeng keeps the sign the SVD happened to give; here the sign
//       then puts the positives' mean projection above the negatives'.

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

enum class PairedComponent { Diff, Center };
// The first principal component of the paired rows above. Throws std::invalid_argument when the
// sets differ in size, hold fewer than two pairs, or their rows do not vary.
Tensor pairedPrincipalComponent(const std::vector<Tensor>& positive,
                                const std::vector<Tensor>& negative, PairedComponent method);

// x' = x + strength·direction at residual stream `stream` (the stream entering that layer; the
// layer count: the last block's output before the final norm); `name` for refusals.
variants::ResidualEdit steeringEdit(const Tensor& direction, float strength, int stream,
                                    const std::string& name);
} // namespace headlight::analysis
