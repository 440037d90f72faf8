#pragma once
// Item 10, talking-heads attention (Shazeer et al. 2020): heads exchange information through two
// learned H × H mixes, of the logits before the softmax (P_l) and of the weights after it (P_w):
//   L_a = Σ_b P_l[a, b] J_b,   W = softmax(L),   U_a = Σ_b P_w[a, b] W_b,   out_a = U_a V_a.
// Identity mixes reproduce vanilla attention exactly (INF-EXACT); edited mixes are INF-TOGGLE.

#include <vector>

#include "backend/backend.h"

namespace headlight::variants {

// x [H, T, T] ← mix · x over the head axis; mix is H × H row-major (rows = output heads).
void mixHeads(Backend& backend, const std::vector<float>& mix, DeviceTensor& x);
} // namespace headlight::variants
