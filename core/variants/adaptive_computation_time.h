#pragma once
// Universal Transformer with adaptive computation time (Dehghani et al. 2019; Graves 2016), as
// tensor2tensor runs it with a forced stop at the last step (docs/zoo-format.md, act):
//   for t in 1..max_steps while some token runs:
//       s = s + positions + timestep(t);  p = σ(s·w_h + b_h)
//       halts = running ∧ (P + p > threshold ∨ t = max_steps);  continues = running ∧ ¬halts
//       P += p·continues;  R = 1 − P where it halts (then P = 1);  N += continues + halts
//       w = p·continues + R·halts;  s = Block(s);  out = w·s + (1 − w)·out
// A token's weights over the steps sum to 1; ponder = N + R.

#include "backend/backend.h"
#include "tensor/tensor.h"

#include <functional>
#include <map>
#include <string>

namespace headlight::variants {

struct AdaptiveComputation {
    int maxSteps = 0;
    float threshold = 0.99f;
    DeviceTensor haltingWeight, haltingBias; // w_h [1, D], b_h [1] (invalid when absent)
};

// Block(s) at step `step` (0-based): the shared layer, its step counting as attention layer `step`.
using StepFunction = std::function<DeviceTensor(int step, const DeviceTensor& state)>;

struct AdaptiveOutcome {
    DeviceTensor out; // [T, D]
    int steps = 0;    // the steps run (every token may halt early)
    std::map<std::string, Tensor>
        internals; // halting_probability, update_weight, ponder, remainder
};

AdaptiveOutcome adaptiveComputation(Backend& backend, const AdaptiveComputation& act,
                                    const DeviceTensor& x, const StepFunction& step);
} // namespace headlight::variants
