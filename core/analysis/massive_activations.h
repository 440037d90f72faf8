#pragma once
// Massive activations (Sun et al. 2024, "Massive Activations in Large Language Models"): a few
// entries of the residual stream, at fixed feature dimensions and at the first token or a
// delimiter, that are about a thousand times the median entry and act as fixed biases that
// attention turns into a sink. This file finds, per residual stream [T, D], its largest
// entries by magnitude and its median magnitude; docs/sinks.md says how they are read.

#include "tensor/tensor.h"

#include <cstdint>
#include <vector>

namespace headlight::analysis {

// Sun et al.'s criterion for a massive activation: |x| > 100 and |x| ≥ 1,000 × the median |x|
// of its hidden state.
constexpr double kMassiveMagnitude = 100.0;
constexpr double kMassiveRatio = 1000.0;

struct Activation {
    int token = 0;
    int dim = 0;
    float value = 0.0f; // signed, as in the stream
    bool operator==(const Activation&) const = default;
};

struct LargestActivations {
    std::vector<Activation> top; // by |value| descending; ties: lower token, then lower dim
    double median = 0.0;         // median |x| over all T · D entries (the mean of the two middle
                                 // ones for an even count, as numpy.median)
    // |top[0]| / median; +inf when the median is 0 and the top is not, 1 when both are 0.
    double ratio() const;
    // Whether `a` meets Sun et al.'s criterion against this stream's median.
    bool isMassive(const Activation& a) const;
};

// The `count` largest entries of `stream` [T, D] (all of them when it has fewer) and its median
// magnitude. Throws std::invalid_argument for a stream that is not [T, D], has fewer than 2
// tokens (the first token would be every token), holds a value that is not finite (naming its
// token and dimension), or for count < 1.
LargestActivations largestActivations(const Tensor& stream, int count);

// The layer where the largest activations arise: the first whose largest |x| is at least half
// the largest over all layers (Sun et al. find them appearing within a layer or two and then
// staying about constant). Throws std::invalid_argument for an empty list.
int layerWhereLargestArise(const std::vector<LargestActivations>& layers);
} // namespace headlight::analysis
