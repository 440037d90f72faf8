#include "analysis/training_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace headlight::analysis {

std::vector<double> tokenLosses(const Tensor& logits, const std::vector<int32_t>& ids) {
    const auto tokens = int64_t(ids.size());
    if (logits.rank() != 2 || logits.dim(0) != tokens)
        throw std::invalid_argument("the logits are not [" + std::to_string(tokens) +
                                    ", vocabulary]");
    const int64_t vocab = logits.dim(1);
    std::vector<double> losses;
    for (int64_t t = 1; t < tokens; ++t) {
        if (ids[std::size_t(t)] < 0 || ids[std::size_t(t)] >= vocab)
            throw std::invalid_argument("token id " + std::to_string(ids[std::size_t(t)]) +
                                        " is outside the vocabulary of " + std::to_string(vocab));
        const float* row = logits.data() + (t - 1) * vocab;
        const double top = *std::max_element(row, row + vocab);
        double sum = 0.0;
        for (int64_t v = 0; v < vocab; ++v)
            sum += std::exp(double(row[v]) - top);
        // Why log-sum-exp from the largest logit: exp of a raw logit overflows past ~88.
        losses.push_back(top + std::log(sum) - double(row[ids[std::size_t(t)]]));
    }
    return losses;
}

double meanLoss(const std::vector<double>& losses) {
    if (losses.empty()) return std::numeric_limits<double>::quiet_NaN();
    return std::accumulate(losses.begin(), losses.end(), 0.0) / double(losses.size());
}

IclPositions iclPositions(int tokens) {
    if (tokens < 3)
        throw std::invalid_argument("the in-context-learning score needs a text of 3 tokens or "
                                    "more, not " +
                                    std::to_string(tokens));
    const int late = std::min(kIclLateToken, tokens - 1);
    const int early = std::max(1, int(std::lround(late * double(kIclEarlyToken) / kIclLateToken)));
    return {early, late};
}

double iclScore(const std::vector<double>& losses, IclPositions positions) {
    return losses.at(std::size_t(positions.late - 1)) - losses.at(std::size_t(positions.early - 1));
}
} // namespace headlight::analysis
