#pragma once
// The CPU backend: every op in plain Eigen, executed at once, except the GEMMs (cpu_gemm.h: a
// tuned BLAS where one was found). It is the reference that every Vulkan kernel is checked
// against, so clarity wins over cleverness here, except for the GEMMs and the per-head attention
// loop, which carry nearly all the work and run multi-threaded.

#include <stdexcept>
#include <string>

#include "backend/backend.h"

namespace headlight::cpu {

// Elementwise ops run on one thread below this many elements. Why: a decode step's FFN row is
// ~10⁴ elements, microseconds of work, less than starting and joining the OpenMP team costs.
constexpr std::size_t kParallelMinElements = std::size_t(1) << 16;

// Host storage of a CPU DeviceTensor.
struct HostStorage : DeviceStorage {
    std::vector<float> values;
};

// A weight the CPU backend reads in its stored dtype, in place in the mapped file (uploadStored).
struct StoredStorage : DeviceStorage {
    io::StoredMatrix matrix;
};

// The f32 values behind a CPU DeviceTensor (throws std::logic_error for another backend's, or
// for a stored weight, which only linear and gatherRows read).
std::vector<float>& valuesOf(const DeviceTensor& tensor);
// The stored weight behind a CPU DeviceTensor, or null for an f32 tensor.
const io::StoredMatrix* storedMatrixOf(const DeviceTensor& tensor);

// A tensor seen as a matrix [size / N, N], N its last dimension.
inline ConstMatrixMap matrixOf(const DeviceTensor& t) {
    const int64_t cols = t.shape().back();
    return ConstMatrixMap(valuesOf(t).data(), t.size() / cols, cols);
}
inline MatrixMap mutableMatrixOf(DeviceTensor& t) {
    const int64_t cols = t.shape().back();
    return MatrixMap(valuesOf(t).data(), t.size() / cols, cols);
}
inline void requireSameSize(const DeviceTensor& a, const DeviceTensor& b, const char* op) {
    if (a.size() != b.size())
        throw std::invalid_argument(std::string(op) + ": shapes " + shapeString(a.shape()) + " and " +
                                    shapeString(b.shape()) + " differ in size");
}

class CpuBackend final : public Backend {
public:
    BackendKind kind() const override { return BackendKind::Cpu; }
    std::string deviceName() const override;

    DeviceTensor upload(const Tensor& host) override;
    DeviceTensor allocate(std::vector<int64_t> shape) override;
    DeviceTensor uploadStored(const io::StoredMatrix& matrix) override;
    Tensor download(const DeviceTensor& tensor) override;
    void finish() override {}

    void linear(const DeviceTensor& x, const DeviceTensor& w, const DeviceTensor* bias, DeviceTensor& out) override;
    void gatherRows(const DeviceTensor& table, std::span<const int32_t> ids, DeviceTensor& out) override;
    void layerNorm(const DeviceTensor& x, const DeviceTensor& gamma, const DeviceTensor& beta, float eps,
                   DeviceTensor& out) override;
    void rmsNorm(const DeviceTensor& x, const DeviceTensor& gamma, float eps, DeviceTensor& out) override;
    void activation(const DeviceTensor& x, Activation kind, DeviceTensor& out) override;
    void gatedActivation(const DeviceTensor& gate, const DeviceTensor& up, Activation kind,
                         DeviceTensor& out) override;
    using Backend::rope;
    void rope(DeviceTensor& x, const RotaryParams& params,
              std::span<const int32_t> positions) override;
    void attention(const DeviceTensor& q, const DeviceTensor& k, const DeviceTensor& v, const AttentionParams& params,
                   DeviceTensor& context, DeviceTensor* scores, DeviceTensor* probs) override;

    void binary(const DeviceTensor& a, const DeviceTensor& b, BinaryOp op, DeviceTensor& out) override;
    void map(const DeviceTensor& x, MapOp op, float alpha, float beta, DeviceTensor& out) override;
    void reduceRows(const DeviceTensor& x, bool sum, DeviceTensor& out) override;
    void softmax(const DeviceTensor& x, const DeviceTensor* mask, DeviceTensor& out) override;
    void sinkSoftmax(const DeviceTensor& x, const DeviceTensor* mask, float sink,
                     DeviceTensor& out) override;
    void matmul(const DeviceTensor& a, const DeviceTensor& b, bool transposeB, float alpha,
                DeviceTensor& out) override;
    void splitHeads(const DeviceTensor& x, int heads, DeviceTensor& out) override;
    void mergeHeads(const DeviceTensor& x, DeviceTensor& out) override;
    void copyRows(const DeviceTensor& src, int64_t srcRow, int64_t rows, DeviceTensor& dst, int64_t dstRow) override;
    void scatterAddRows(const DeviceTensor& src, std::span<const int32_t> ids, std::span<const float> weights,
                        DeviceTensor& out) override;
    void causalLinearAttention(const DeviceTensor& phiQ, const DeviceTensor& phiK, const DeviceTensor& v, float eps,
                               DeviceTensor& out) override;
    void sparseAttention(const DeviceTensor& q, const DeviceTensor& k, const DeviceTensor& v,
                         const SparsePattern& pattern, float scale,
                         std::span<const float> alibiSlopes, DeviceTensor& context,
                         DeviceTensor* weights) override;
};
} // namespace headlight::cpu
