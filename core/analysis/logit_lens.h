#pragma once
// The logit lens (nostalgebraist 2020, "interpreting GPT: the logit lens"): the model's final
// norm and unembedding applied to the residual stream after every layer, read as a next-token
// distribution. One row per hidden state in Hugging Face's hidden_states order (the embeddings,
// then each layer; the last row is the model's own logits), one column per position.
// Probabilities are softmax(logits) in double; entropy in nats; ranks count the tokens with a
// strictly larger logit (0 = the row's top token).

#include "model/trace.h"
#include "tensor/tensor.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace headlight {
class TransformerModel;
}

namespace headlight::analysis {

struct LogitLens {
    int rows = 0;                   // hidden states: L + 1
    int tokens = 0;                 // positions
    std::vector<int32_t> top;       // [rows · T] the row's most likely token
    std::vector<float> probability; // [rows · T] its probability
    std::vector<float> entropy;     // [rows · T] nats
    std::vector<int32_t> finalRank; // [rows · T] rank of the last row's top token in this row

    std::size_t at(int row, int t) const {
        return std::size_t(row) * std::size_t(tokens) + std::size_t(t);
    }
    // The first row whose top token is the final prediction at position t and stays so in every
    // later row; rows − 1 when only the last does.
    int settledRow(int t) const;
};

// `finalLogits` [T, V] is the last row; `rowLogits(first, count)` gives rows first … first +
// count − 1 (all < rows − 1) as [count · T, V]. Rows are asked for in blocks of up to 256 MiB of
// logits: an LM head in a 16-bit dtype is converted once per call, and an 8B's is 1 GB.
LogitLens logitLens(int rows, const Tensor& finalLogits,
                    const std::function<Tensor(int first, int count)>& rowLogits);

// The lens of a pass captured with hiddenStates and logits: rows are the trace's hidden states,
// the last replaced by the model's logits. Throws ModelError when the model has no LM head.
LogitLens logitLens(const TransformerModel& model, const Trace& trace);

// One row of logits [V] -> its top token, that token's probability and the entropy (nats).
struct TokenDistribution {
    int32_t top = 0;
    double probability = 0.0, entropy = 0.0;
};
TokenDistribution distributionOf(const float* logits, int64_t vocab);
} // namespace headlight::analysis
