#pragma once
// Item 21, sigmoid attention (Ramapuram et al. 2024, "Theory, Analysis, and Best Practices for
// Sigmoid Self-Attention", apple/ml-sigmoid-attention): each weight on its own, no normaliser,
//   a_ij = σ(L_ij + b) for an allowed key, 0 for a masked one,
// with the paper's recommended bias b = −ln n. As their reference (attention_simulator
// layers/attention.py: a constant attn_bias added to every logit, e.g. −ln 8192 for their
// 8192-token context) n is the sequence length, here the number of keys of the pass (T), not the
// number of keys a query sees: every row of a causal model shares the same b. Rows do not sum to 1.

#include "backend/backend.h"
#include "variants/variant_spec.h"

namespace headlight::variants {

// The bias b: rule.bias when given, else −ln(keys).
float sigmoidBias(const WeightRule& rule, int64_t keys);

// weights [H, T, T] ← σ(logits + b) ⊙ mask; mask [Hm, T, T] (1 = allowed) or null. weights may
// alias logits.
void sigmoidWeights(Backend& backend, const WeightRule& rule, const DeviceTensor& logits,
                    const DeviceTensor* mask, DeviceTensor& weights);
} // namespace headlight::variants
