#include "analysis/massive_activations.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace headlight::analysis {
namespace {

// Larger magnitude first; on equal magnitude the earlier token, then the lower dimension, so
// that the order is the same on every run and platform.
bool largerFirst(const Activation& a, const Activation& b) {
    const float ma = std::abs(a.value), mb = std::abs(b.value);
    if (ma != mb) return ma > mb;
    if (a.token != b.token) return a.token < b.token;
    return a.dim < b.dim;
}

double medianOf(std::vector<float> magnitudes) {
    const std::size_t n = magnitudes.size(), middle = n / 2;
    std::nth_element(magnitudes.begin(), magnitudes.begin() + std::ptrdiff_t(middle),
                     magnitudes.end());
    const double upper = magnitudes[middle];
    if (n % 2 == 1) return upper;
    const double lower =
        *std::max_element(magnitudes.begin(), magnitudes.begin() + std::ptrdiff_t(middle));
    return (lower + upper) / 2.0;
}
} // namespace

double LargestActivations::ratio() const {
    const double largest = top.empty() ? 0.0 : std::abs(double(top.front().value));
    if (median > 0.0) return largest / median;
    return largest > 0.0 ? std::numeric_limits<double>::infinity() : 1.0;
}

bool LargestActivations::isMassive(const Activation& a) const {
    const double magnitude = std::abs(double(a.value));
    return magnitude > kMassiveMagnitude && magnitude >= kMassiveRatio * median;
}

LargestActivations largestActivations(const Tensor& stream, int count) {
    if (count < 1) throw std::invalid_argument("at least one activation must be asked for");
    if (stream.rank() != 2)
        throw std::invalid_argument("a residual stream is [T, D], not " + stream.shapeString());
    const int64_t tokens = stream.dim(0), width = stream.dim(1);
    if (tokens < 2)
        throw std::invalid_argument("massive activations need a text of at least 2 tokens: with "
                                    "one, the first token is every token");
    std::vector<Activation> all;
    std::vector<float> magnitudes;
    all.reserve(stream.size());
    magnitudes.reserve(stream.size());
    for (int64_t t = 0; t < tokens; ++t)
        for (int64_t d = 0; d < width; ++d) {
            const float value = stream.data()[t * width + d];
            if (!std::isfinite(value))
                throw std::invalid_argument("the residual stream holds a value that is not "
                                            "finite at token " +
                                            std::to_string(t) + ", dimension " + std::to_string(d));
            all.push_back({int(t), int(d), value});
            magnitudes.push_back(std::abs(value));
        }
    const auto kept = std::min<std::size_t>(std::size_t(count), all.size());
    std::partial_sort(all.begin(), all.begin() + std::ptrdiff_t(kept), all.end(), largerFirst);
    all.resize(kept);
    return {std::move(all), medianOf(std::move(magnitudes))};
}

int layerWhereLargestArise(const std::vector<LargestActivations>& layers) {
    if (layers.empty()) throw std::invalid_argument("no layer to look at");
    const auto largest = [](const LargestActivations& l) {
        return l.top.empty() ? 0.0 : std::abs(double(l.top.front().value));
    };
    double peak = 0.0;
    for (const LargestActivations& layer : layers)
        peak = std::max(peak, largest(layer));
    for (std::size_t l = 0; l < layers.size(); ++l)
        if (largest(layers[l]) >= peak / 2.0) return int(l);
    return 0;
}
} // namespace headlight::analysis
