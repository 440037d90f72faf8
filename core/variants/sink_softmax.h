#pragma once
// Item 21, softmax with a sink logit: every row of scores L gets one more logit b that takes its
// share of the normaliser and is then dropped,
//   a_ij = e^(L_ij) / (e^b + Σ_k e^(L_ik))   (k over the allowed keys; masked keys get 0),
// so a row sums to less than 1 and a query can attend to nothing. b = 0 is Miller 2023, "Attention
// Is Off By One" (softmax₁); gpt-oss (OpenAI 2025, gpt_oss/torch/model.py `sdpa`) learns one b per
// head and appends it to the scores before torch.softmax, which is this with a constant b.
// Computed with M = max(max_k L_ik, b) subtracted (Backend::sinkSoftmax), so a fully masked row
// becomes 0 rather than uniform.

#include "backend/backend.h"
#include "variants/variant_spec.h"

namespace headlight::variants {

// weights [H, T, T] ← the sink softmax of logits [H, T, T] with b = rule.sink; mask [Hm, T, T]
// (1 = allowed) or null. weights may alias logits.
void sinkSoftmaxWeights(Backend& backend, const WeightRule& rule, const DeviceTensor& logits,
                        const DeviceTensor* mask, DeviceTensor& weights);
} // namespace headlight::variants
