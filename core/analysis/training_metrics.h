#pragma once
// The language-model measures the training scrubber draws over checkpoints (docs/scrubber.md):
// the loss of a text and the in-context-learning score of Olsson et al. (2022, "In-context
// Learning and Induction Heads"): the loss at a late token minus the loss at an early one, which
// falls below zero as the model learns to use its context.

#include "tensor/tensor.h"

#include <cstdint>
#include <vector>

namespace headlight::analysis {

// −ln p(ids[t] | ids[<t]) for t = 1..T−1 from next-token logits [T, V] (row t − 1 predicts token
// t), in nats; element t − 1 is token t's loss. Throws std::invalid_argument when the shapes
// disagree or an id is outside the vocabulary.
std::vector<double> tokenLosses(const Tensor& logits, const std::vector<int32_t>& ids);

double meanLoss(const std::vector<double>& losses); // NaN when empty

// Olsson et al. take token 500 minus token 50 of a context of at least 512. Scaled to a shorter
// text, the rule keeps their 10:1 ratio: late = min(500, T − 1), early = max(1, round(late / 10)),
// token indices from 0 (so token t's loss is tokenLosses()[t − 1]). A text of T tokens needs
// T ≥ 3 to have two distinct positions.
struct IclPositions {
    int early = 0;
    int late = 0;
};
constexpr int kIclLateToken = 500, kIclEarlyToken = 50;
// Throws std::invalid_argument for fewer than 3 tokens.
IclPositions iclPositions(int tokens);
// ℓ(late) − ℓ(early), from tokenLosses' output.
double iclScore(const std::vector<double>& losses, IclPositions positions);
} // namespace headlight::analysis
