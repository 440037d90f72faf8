#include "trace.h"

#include <algorithm>
#include <stdexcept>

namespace headlight {

bool CaptureRequest::wantsLayer(int layer) const {
    return layers.empty() || std::find(layers.begin(), layers.end(), layer) != layers.end();
}

Tensor selectHeads(const Tensor& perHead, const std::vector<int>& heads) {
    if (heads.empty()) return perHead;
    const int64_t count = perHead.dim(0), block = perHead.dim(1) * perHead.dim(2);
    std::vector<float> values;
    for (int h : heads) {
        if (h < 0 || h >= count)
            throw std::out_of_range("head " + std::to_string(h) + " does not exist (the model has " +
                                    std::to_string(count) + ")");
        values.insert(values.end(), perHead.values().begin() + h * block, perHead.values().begin() + (h + 1) * block);
    }
    return Tensor({int64_t(heads.size()), perHead.dim(1), perHead.dim(2)}, std::move(values));
}

Tensor Trace::stackedProbabilities() const {
    if (layers.empty()) return Tensor({0});
    std::vector<float> values;
    std::vector<int64_t> shape;
    for (std::size_t l = 0; l < layers.size(); ++l) {
        const Tensor& p = layers[l].probabilities;
        if (p.empty()) throw std::logic_error("layer " + std::to_string(l) + " was not captured");
        if (shape.empty()) shape = p.shape();
        values.insert(values.end(), p.values().begin(), p.values().end());
    }
    shape.insert(shape.begin(), int64_t(layers.size()));
    return Tensor(shape, std::move(values));
}
} // namespace headlight
