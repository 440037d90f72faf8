#include "variants/sigmoid_attention.h"

#include <cmath>

namespace headlight::variants {

float sigmoidBias(const WeightRule& rule, int64_t keys) {
    return rule.bias.value_or(-float(std::log(double(keys))));
}

void sigmoidWeights(Backend& backend, const WeightRule& rule, const DeviceTensor& logits,
                    const DeviceTensor* mask, DeviceTensor& weights) {
    const float bias = sigmoidBias(rule, logits.shape().back());
    backend.map(logits, MapOp::Sigmoid, 1.0f, bias, weights);
    // Why a product: σ is finite, so σ·0 is exactly 0 on a masked key and σ·1 is σ.
    if (mask) backend.binary(weights, *mask, BinaryOp::Mul, weights);
}
} // namespace headlight::variants
