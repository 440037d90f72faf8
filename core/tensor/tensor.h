#pragma once
// Tensor: a dense, row-major, host-side f32 array with a shape. The engine computes in f32
// whatever the checkpoint stores (f16 and bf16 are widened on load), so one element type is
// enough here; the dtype of stored data lives with the checkpoint (io/safetensors.h).

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace headlight {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<RowMatrix>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;

class Tensor {
public:
    Tensor() = default;
    explicit Tensor(std::vector<int64_t> shape, float fill = 0.0f);
    Tensor(std::vector<int64_t> shape, std::vector<float> values); // sizes must agree

    const std::vector<int64_t>& shape() const { return shape_; }
    int64_t dim(std::size_t axis) const { return shape_.at(axis); }
    std::size_t rank() const { return shape_.size(); }
    std::size_t size() const { return values_.size(); }
    bool empty() const { return values_.empty(); }

    float* data() { return values_.data(); }
    const float* data() const { return values_.data(); }
    std::span<float> values() { return values_; }
    std::span<const float> values() const { return values_; }

    // The tensor as a (rows × last-dim) matrix; rank ≥ 1.
    MatrixMap matrix();
    ConstMatrixMap matrix() const;

    void reshape(std::vector<int64_t> shape); // same element count
    std::string shapeString() const;         // "[2, 3, 4]"

private:
    std::vector<int64_t> shape_;
    std::vector<float> values_;
};

std::string shapeString(const std::vector<int64_t>& shape);
int64_t elementCount(const std::vector<int64_t>& shape); // throws on negative dims or overflow
} // namespace headlight
