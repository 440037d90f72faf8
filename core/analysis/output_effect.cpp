#include "analysis/output_effect.h"

#include "analysis/divergence.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <stdexcept>

namespace headlight::analysis {
namespace {

// ln Σ e^{x}, shifted by the maximum.
double logSumExp(const float* x, int64_t n) {
    const double top = *std::max_element(x, x + n);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i)
        sum += std::exp(double(x[i]) - top);
    return top + std::log(sum);
}

std::vector<float> headJsd(const Trace& exact, const Trace& variant, const TokenMask& valid,
                           int& heads) {
    Tensor a, b;
    try {
        a = exact.stackedProbabilities();
        b = variant.stackedProbabilities();
    } catch (const std::exception&) {
        return {}; // a pass without maps (a kernel with none, or not captured)
    }
    if (a.shape() != b.shape()) return {};
    const int64_t layers = a.dim(0), t = a.dim(2);
    heads = int(a.dim(1));
    std::vector<float> out(std::size_t(layers * heads), 0.0f);
    const int64_t queries =
        std::count_if(valid.begin(), valid.end(), [](uint8_t v) { return v != 0; });
    for (int64_t lh = 0; lh < layers * heads; ++lh) {
        double sum = 0.0;
        for (int64_t q = 0; q < t; ++q) {
            if (!valid[std::size_t(q)]) continue;
            const std::size_t offset = std::size_t((lh * t + q) * t);
            sum += jensenShannonBits(std::span(a.data() + offset, std::size_t(t)),
                                     std::span(b.data() + offset, std::size_t(t)), valid);
        }
        out[std::size_t(lh)] = queries ? float(sum / double(queries)) : 0.0f;
    }
    return out;
}

std::vector<float> hiddenChange(const Trace& exact, const Trace& variant, const TokenMask& valid) {
    if (exact.hiddenStates.size() != variant.hiddenStates.size()) return {};
    std::vector<float> out;
    for (std::size_t l = 0; l < exact.hiddenStates.size(); ++l) {
        const Tensor &e = exact.hiddenStates[l], &v = variant.hiddenStates[l];
        if (e.shape() != v.shape() || e.dim(0) != int64_t(valid.size())) return {};
        const int64_t d = e.dim(1);
        double diff = 0.0, norm = 0.0;
        for (int64_t t = 0; t < e.dim(0); ++t) {
            if (!valid[std::size_t(t)]) continue;
            for (int64_t i = 0; i < d; ++i) {
                const double x = e.data()[t * d + i], y = v.data()[t * d + i];
                diff += (y - x) * (y - x);
                norm += x * x;
            }
        }
        out.push_back(norm > 0.0 ? float(std::sqrt(diff / norm)) : 0.0f);
    }
    return out;
}
} // namespace

double klDivergence(const float* p, const float* q, int64_t vocab) {
    const double lp = logSumExp(p, vocab), lq = logSumExp(q, vocab);
    double kl = 0.0;
    for (int64_t v = 0; v < vocab; ++v) {
        const double logP = double(p[v]) - lp;
        kl += std::exp(logP) * (logP - (double(q[v]) - lq));
    }
    return std::max(kl, 0.0);
}

std::vector<int32_t> topK(const float* logits, int64_t vocab, int k) {
    std::vector<int32_t> ids(static_cast<std::size_t>(vocab));
    std::iota(ids.begin(), ids.end(), 0);
    const auto count = std::min<int64_t>(k, vocab);
    std::partial_sort(ids.begin(), ids.begin() + count, ids.end(), [&](int32_t a, int32_t b) {
        return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
    });
    ids.resize(std::size_t(count));
    return ids;
}

std::vector<int> OutputEffect::changedPositions() const {
    std::vector<int> changed;
    for (int t = 0; t < tokens; ++t)
        if (valid[std::size_t(t)] && exactTop[std::size_t(t)] != variantTop[std::size_t(t)])
            changed.push_back(t);
    return changed;
}

OutputEffect outputEffect(const Trace& exact, const Trace& variant, int k) {
    if (exact.logits.empty() || variant.logits.empty())
        throw std::invalid_argument("the output effect compares two passes captured with logits");
    if (exact.logits.shape() != variant.logits.shape())
        throw std::invalid_argument("the two passes differ in length or vocabulary");
    OutputEffect effect;
    effect.k = k;
    effect.tokens = int(exact.logits.dim(0));
    effect.valid = exact.valid;
    effect.headJsd = headJsd(exact, variant, effect.valid, effect.heads);
    effect.layers = effect.heads ? int(effect.headJsd.size()) / effect.heads : 0;
    effect.hiddenChange = hiddenChange(exact, variant, effect.valid);
    const int64_t vocab = exact.logits.dim(1);
    int counted = 0, agree = 0;
    for (int t = 0; t < effect.tokens; ++t) {
        const float* p = exact.logits.data() + t * vocab;
        const float* q = variant.logits.data() + t * vocab;
        const std::vector<int32_t> topP = topK(p, vocab, k), topQ = topK(q, vocab, k);
        const bool valid = effect.valid[std::size_t(t)] != 0;
        const double kl = valid ? klDivergence(p, q, vocab) : 0.0;
        const int flips = int(std::count_if(topP.begin(), topP.end(), [&](int32_t id) {
            return std::find(topQ.begin(), topQ.end(), id) == topQ.end();
        }));
        effect.kl.push_back(float(kl));
        effect.exactTop.push_back(topP.front());
        effect.variantTop.push_back(topQ.front());
        effect.topKFlips.push_back(valid ? flips : 0);
        if (!valid) continue;
        ++counted;
        agree += topP.front() == topQ.front();
        effect.meanKl += kl;
        effect.meanTopKFlips += flips;
    }
    if (counted) {
        effect.meanKl /= counted;
        effect.top1Agreement = double(agree) / counted;
        effect.meanTopKFlips /= counted;
    }
    return effect;
}
} // namespace headlight::analysis
