#pragma once
// What a variant does to a model's output, against exact attention on the same text: two passes
// (captured with probabilities, hidden states and logits) compared layer by layer and at the LM
// head. Per layer and head the mean over valid queries of JSD(exact row, variant row) in bits;
// per hidden state ‖h_variant − h_exact‖_F / ‖h_exact‖_F over the valid positions; per position
// KL(p_exact ‖ p_variant) in nats, whether the top-1 token agrees, and the top-k flips: how many
// of the exact pass's k most likely tokens left the variant's k most likely.

#include "analysis/attention_view.h"
#include "model/trace.h"

#include <cstdint>
#include <vector>

namespace headlight::analysis {

struct OutputEffect {
    int layers = 0, heads = 0, tokens = 0, k = 5;
    std::vector<float> headJsd;                // [L · H] bits; empty when either pass has no maps
    std::vector<float> hiddenChange;           // [hidden states]; empty when either pass has none
    std::vector<float> kl;                     // [T] nats; 0 at padding
    std::vector<int32_t> exactTop, variantTop; // [T]
    std::vector<int> topKFlips;                // [T]
    TokenMask valid;                           // [T]
    double meanKl = 0.0, top1Agreement = 0.0, meanTopKFlips = 0.0; // over valid positions

    std::vector<int> changedPositions() const; // valid positions whose top-1 token changed
};

// Throws std::invalid_argument when the passes differ in length or vocabulary, or lack logits.
OutputEffect outputEffect(const Trace& exact, const Trace& variant, int k = 5);

// KL(p ‖ q) in nats of softmax(p_logits) and softmax(q_logits), in double.
double klDivergence(const float* pLogits, const float* qLogits, int64_t vocab);
// The k largest logits' token ids, largest first (ties: the lower id first).
std::vector<int32_t> topK(const float* logits, int64_t vocab, int k);
} // namespace headlight::analysis
