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

LogitLens logitLens(int rows, const Tensor& finalLogits,
                    const std::function<Tensor(int row)>& rowLogits) {
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
    for (int r = 0; r < rows; ++r) {
        const Tensor logits = r == rows - 1 ? finalLogits : rowLogits(r);
        for (int t = 0; t < lens.tokens; ++t) {
            const float* row = logits.data() + t * vocab;
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
    return logitLens(rows, trace.logits, [&](int row) {
        return model.lensLogits(trace.hiddenStates[std::size_t(row)]);
    });
}
} // namespace headlight::analysis
