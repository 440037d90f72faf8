#include "analysis/logit_lens.h"

#include "model/transformer.h"

#include <algorithm>
#include <cmath>

namespace headlight::analysis {

TokenDistribution distributionOf(const float* logits, int64_t vocab) {
    TokenDistribution d;
    d.top = int32_t(std::max_element(logits, logits + vocab) - logits);
    const double top = logits[d.top];
    double sum = 0.0, weighted = 0.0;
    for (int64_t v = 0; v < vocab; ++v) {
        const double shifted = double(logits[v]) - top, e = std::exp(shifted);
        sum += e;
        weighted += e * shifted;
    }
    // H = −Σ p ln p with p = e^{s}/Z: H = ln Z − Σ e^{s} s / Z.
    d.probability = 1.0 / sum;
    d.entropy = std::log(sum) - weighted / sum;
    return d;
}

int LogitLens::settledRow(int t) const {
    int row = rows - 1;
    while (row > 0 && top[at(row - 1, t)] == top[at(rows - 1, t)])
        --row;
    return row;
}

namespace {
constexpr int64_t kLensBlockBytes = int64_t(256) << 20;

// Row `r` of the lens, read from `logits` [T, V].
void readRow(LogitLens& lens, int r, const float* logits, int64_t vocab,
             const std::vector<int32_t>& finalTop) {
    for (int t = 0; t < lens.tokens; ++t) {
        const float* row = logits + t * vocab;
        const TokenDistribution d = distributionOf(row, vocab);
        const float target = row[finalTop[std::size_t(t)]];
        const std::size_t i = lens.at(r, t);
        lens.top[i] = d.top;
        lens.probability[i] = float(d.probability);
        lens.entropy[i] = float(d.entropy);
        lens.finalRank[i] =
            int32_t(std::count_if(row, row + vocab, [&](float v) { return v > target; }));
    }
}
} // namespace

LogitLens logitLens(int rows, const Tensor& finalLogits,
                    const std::function<Tensor(int first, int count)>& rowLogits) {
    LogitLens lens;
    lens.rows = rows;
    lens.tokens = int(finalLogits.dim(0));
    const int64_t vocab = finalLogits.dim(1);
    const std::size_t cells = std::size_t(rows) * std::size_t(lens.tokens);
    lens.top.resize(cells);
    lens.probability.resize(cells);
    lens.entropy.resize(cells);
    lens.finalRank.resize(cells);
    std::vector<int32_t> finalTop(std::size_t(lens.tokens));
    for (int t = 0; t < lens.tokens; ++t)
        finalTop[std::size_t(t)] = distributionOf(finalLogits.data() + t * vocab, vocab).top;
    const int64_t rowBytes = std::max<int64_t>(1, int64_t(finalLogits.size() * sizeof(float)));
    const int block = int(std::max<int64_t>(1, kLensBlockBytes / rowBytes));
    for (int first = 0; first < rows - 1; first += block) {
        const int count = std::min(block, rows - 1 - first);
        const Tensor logits = rowLogits(first, count);
        for (int r = 0; r < count; ++r)
            readRow(lens, first + r, logits.data() + int64_t(r) * int64_t(finalLogits.size()),
                    vocab, finalTop);
    }
    readRow(lens, rows - 1, finalLogits.data(), vocab, finalTop);
    return lens;
}

LogitLens logitLens(const TransformerModel& model, const Trace& trace) {
    if (!model.hasLmHead()) throw ModelError(model.lmHeadAbsence());
    if (trace.logits.empty() || trace.hiddenStates.empty())
        throw ModelError("the logit lens needs a pass captured with hidden states and logits");
    const int rows = int(trace.hiddenStates.size());
    for (const Tensor& hidden : trace.hiddenStates)
        if (hidden.dim(0) != trace.logits.dim(0))
            throw ModelError("the logit lens needs every layer's hidden state at token resolution, "
                             "and this pass pools tokens");
    return logitLens(rows, trace.logits, [&](int first, int count) {
        const Tensor& one = trace.hiddenStates[std::size_t(first)];
        Tensor stacked({count * one.dim(0), one.dim(1)}, 0.0f);
        for (int r = 0; r < count; ++r) {
            const Tensor& hidden = trace.hiddenStates[std::size_t(first + r)];
            std::copy(hidden.data(), hidden.data() + hidden.size(),
                      stacked.data() + int64_t(r) * int64_t(one.size()));
        }
        return model.lensLogits(stacked);
    });
}
} // namespace headlight::analysis
