#include "tensor.h"

#include <limits>
#include <stdexcept>

namespace headlight {

int64_t elementCount(const std::vector<int64_t>& shape) {
    int64_t count = 1;
    for (int64_t d : shape) {
        if (d < 0) throw std::invalid_argument("negative dimension in shape " + shapeString(shape));
        if (d != 0 && count > std::numeric_limits<int64_t>::max() / d)
            throw std::overflow_error("shape " + shapeString(shape) + " overflows 64 bits");
        count *= d;
    }
    return count;
}

std::string shapeString(const std::vector<int64_t>& shape) {
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
}

Tensor::Tensor(std::vector<int64_t> shape, float fill)
    : shape_(std::move(shape)), values_(static_cast<std::size_t>(elementCount(shape_)), fill) {}

Tensor::Tensor(std::vector<int64_t> shape, std::vector<float> values)
    : shape_(std::move(shape)), values_(std::move(values)) {
    if (elementCount(shape_) != static_cast<int64_t>(values_.size()))
        throw std::invalid_argument("tensor of shape " + headlight::shapeString(shape_) + " given " +
                                    std::to_string(values_.size()) + " values");
}

MatrixMap Tensor::matrix() {
    const int64_t cols = shape_.empty() ? 1 : shape_.back();
    return MatrixMap(values_.data(), cols ? int64_t(values_.size()) / cols : 0, cols);
}

ConstMatrixMap Tensor::matrix() const {
    const int64_t cols = shape_.empty() ? 1 : shape_.back();
    return ConstMatrixMap(values_.data(), cols ? int64_t(values_.size()) / cols : 0, cols);
}

void Tensor::reshape(std::vector<int64_t> shape) {
    if (elementCount(shape) != static_cast<int64_t>(values_.size()))
        throw std::invalid_argument("cannot reshape " + headlight::shapeString(shape_) + " to " + headlight::shapeString(shape));
    shape_ = std::move(shape);
}

std::string Tensor::shapeString() const { return headlight::shapeString(shape_); }
} // namespace headlight
