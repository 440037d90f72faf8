#pragma once
// Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"): how
// much each output position draws on each input token once attention is composed across layers,
// with the residual connection modelled as an identity matrix.

#include "analysis/attention_view.h"
#include "tensor/tensor.h"

namespace headlight::analysis {

// [L, H, T, T] -> [T, T]. Per layer Â_l = 0.5 · mean_h A_l + 0.5 · I, restricted to valid tokens
// and with rows renormalised to sum to 1; rollout = Â_L ⋯ Â_1. Row i tells how much position i
// at the top draws on each input token. Padded rows and columns are 0; valid rows sum to 1.
// Zero layers give the identity on valid tokens.
Tensor attentionRollout(const Tensor& attention, const TokenMask& valid);
} // namespace headlight::analysis
