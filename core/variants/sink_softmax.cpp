#include "variants/sink_softmax.h"

namespace headlight::variants {

void sinkSoftmaxWeights(Backend& backend, const WeightRule& rule, const DeviceTensor& logits,
                        const DeviceTensor* mask, DeviceTensor& weights) {
    backend.sinkSoftmax(logits, mask, rule.sink, weights);
}
} // namespace headlight::variants
