#include "variants/early_exit.h"

#include <algorithm>
#include <cmath>

namespace headlight::variants {

LayerSignal logitSignal(const EarlyExit& exit, const Tensor& logits) {
    const int64_t tokens = logits.shape()[0], vocab = logits.shape()[1];
    LayerSignal signal;
    for (int64_t t = 0; t < tokens; ++t) {
        const float* row = logits.values().data() + t * vocab;
        const float* top = std::max_element(row, row + vocab);
        double sum = 0.0, weighted = 0.0;
        for (int64_t v = 0; v < vocab; ++v) {
            const double e = std::exp(double(row[v] - *top));
            sum += e;
            weighted += e * double(row[v] - *top);
        }
        // H = log Σe − Σ e·x / Σe with x shifted by the max; the top probability is 1 / Σe.
        const double entropy = std::log(sum) - weighted / sum;
        signal.value.push_back(float(exit.criterion == EarlyExit::Criterion::Entropy ? entropy : 1.0 / sum));
        signal.top.push_back(int32_t(top - row));
    }
    return signal;
}

LayerSignal saturationSignal(const Tensor& previous, const Tensor& current) {
    const int64_t tokens = current.shape()[0], width = current.shape()[1];
    LayerSignal signal;
    for (int64_t t = 0; t < tokens; ++t) {
        const float* a = previous.values().data() + t * width;
        const float* b = current.values().data() + t * width;
        double dot = 0.0, na = 0.0, nb = 0.0;
        for (int64_t i = 0; i < width; ++i) dot += double(a[i]) * b[i], na += double(a[i]) * a[i], nb += double(b[i]) * b[i];
        signal.value.push_back(float(dot / std::max(std::sqrt(na * nb), 1e-30)));
    }
    return signal;
}

ExitTracker::ExitTracker(const EarlyExit& exit, int64_t tokens, int layers)
    : exit_(exit), layers_(layers), exitLayer_(std::size_t(tokens), 0), streak_(std::size_t(tokens), 0),
      lastTop_(std::size_t(tokens), -1), prediction_(std::size_t(tokens), -1),
      signals_(std::size_t(layers * tokens), std::nanf("")) {}

bool ExitTracker::passes(int64_t token, const LayerSignal& signal) {
    const std::size_t t = std::size_t(token);
    const float value = signal.value[t];
    switch (exit_.criterion) {
    case EarlyExit::Criterion::Entropy: return value < exit_.threshold;
    case EarlyExit::Criterion::SoftmaxResponse:
    case EarlyExit::Criterion::Saturation: return value >= exit_.threshold;
    case EarlyExit::Criterion::Patience:
        streak_[t] = signal.top[t] == lastTop_[t] ? streak_[t] + 1 : 0;
        lastTop_[t] = signal.top[t];
        return streak_[t] >= exit_.patience;
    case EarlyExit::Criterion::None: return false;
    }
    return false;
}

std::vector<int64_t> ExitTracker::update(int layer, const LayerSignal& signal) {
    std::vector<int64_t> leaving;
    const int64_t tokens = int64_t(exitLayer_.size());
    for (int64_t t = 0; t < tokens; ++t) {
        if (exited(t)) continue;
        const std::size_t i = std::size_t(t);
        signals_[std::size_t(layer) * exitLayer_.size() + i] =
            exit_.criterion == EarlyExit::Criterion::Patience ? float(signal.top[i]) : signal.value[i];
        if (passes(t, signal) || layer + 1 == layers_) {
            exitLayer_[i] = layer + 1;
            if (!signal.top.empty()) prediction_[i] = signal.top[i];
            leaving.push_back(t);
        }
    }
    return leaving;
}

Tensor ExitTracker::exitLayers() const {
    Tensor result({int64_t(exitLayer_.size())});
    std::transform(exitLayer_.begin(), exitLayer_.end(), result.values().begin(), [](int l) { return float(l); });
    return result;
}

Tensor ExitTracker::signals() const { return Tensor({layers_, int64_t(exitLayer_.size())}, signals_); }

Tensor ExitTracker::predictions() const {
    Tensor result({int64_t(prediction_.size())});
    std::transform(prediction_.begin(), prediction_.end(), result.values().begin(), [](int32_t p) { return float(p); });
    return result;
}
} // namespace headlight::variants
