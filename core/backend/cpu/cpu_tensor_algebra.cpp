// The CPU backend's tensor-algebra ops (backend.h, "tensor algebra for variants"): the reference
// that the Vulkan kernels of the same ops are checked against.
#include "cpu_backend.h"
#include "cpu_gemm.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace headlight::cpu {
namespace {

// Batch, rows and columns of a tensor seen as [B, M, N]; 2-D tensors have B = 1.
struct Batched {
    int64_t batch, rows, cols;
};

Batched batchedShape(const DeviceTensor& t, const char* op) {
    const auto& s = t.shape();
    if (s.size() == 2) return {1, s[0], s[1]};
    if (s.size() == 3) return {s[0], s[1], s[2]};
    throw std::invalid_argument(std::string(op) + ": expected a 2-D or 3-D tensor, got " + shapeString(s));
}

float apply(BinaryOp op, float a, float b) {
    switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
    }
    return a;
}

float apply(MapOp op, float y) {
    switch (op) {
    case MapOp::Affine: return y;
    case MapOp::Exp: return std::exp(y);
    case MapOp::Elu1: return y > 0.0f ? y + 1.0f : std::exp(y);
    case MapOp::Relu: return y > 0.0f ? y : 0.0f;
    case MapOp::Sigmoid: return 1.0f / (1.0f + std::exp(-y));
    case MapOp::Cos: return std::cos(y);
    case MapOp::Sin: return std::sin(y);
    case MapOp::Square: return y * y;
    case MapOp::Sqrt: return std::sqrt(y);
    case MapOp::Log: return std::log(y);
    case MapOp::Tanh: return std::tanh(y);
    }
    return y;
}
} // namespace

void CpuBackend::binary(const DeviceTensor& a, const DeviceTensor& b, BinaryOp op, DeviceTensor& out) {
    requireSameSize(a, out, "binary");
    const auto& av = valuesOf(a);
    const auto& bv = valuesOf(b);
    auto& ov = valuesOf(out);
    const int64_t cols = a.shape().back(), rows = a.size() / cols;
    const bool perRow = b.shape().size() == 2 && b.dim(1) == 1 && b.dim(0) == rows && cols != 1;
    if (perRow) {
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) ov[r * cols + c] = apply(op, av[r * cols + c], bv[r]);
        return;
    }
    const std::size_t period = bv.size();
    if (period == 0 || av.size() % period || b.shape().back() != cols)
        throw std::invalid_argument("binary: b " + shapeString(b.shape()) + " does not tile a " +
                                    shapeString(a.shape()));
    for (std::size_t i = 0; i < av.size(); ++i) ov[i] = apply(op, av[i], bv[i % period]);
}

void CpuBackend::map(const DeviceTensor& x, MapOp op, float alpha, float beta, DeviceTensor& out) {
    requireSameSize(x, out, "map");
    const auto& in = valuesOf(x);
    auto& result = valuesOf(out);
    for (std::size_t i = 0; i < in.size(); ++i) result[i] = apply(op, std::fma(alpha, in[i], beta));
}

void CpuBackend::reduceRows(const DeviceTensor& x, bool sum, DeviceTensor& out) {
    const ConstMatrixMap m = matrixOf(x);
    if (out.size() != m.rows()) throw std::invalid_argument("reduceRows: out must hold one value per row");
    auto& result = valuesOf(out);
    for (Eigen::Index r = 0; r < m.rows(); ++r) result[std::size_t(r)] = sum ? m.row(r).sum() : m.row(r).maxCoeff();
}

namespace {
// Row softmax of x over its last dimension, masked as Backend::softmax says; with a sink, one
// more logit of that value shares each row's normaliser and is then dropped.
void rowSoftmax(const DeviceTensor& x, const DeviceTensor* mask, std::optional<float> sink,
                DeviceTensor& out, const char* op) {
    requireSameSize(x, out, op);
    const ConstMatrixMap in = matrixOf(x);
    MatrixMap result = mutableMatrixOf(out);
    const int64_t maskRows = mask ? mask->size() / in.cols() : 0;
    if (mask && (mask->shape().back() != in.cols() || in.rows() % maskRows))
        throw std::invalid_argument(std::string(op) + ": mask " + shapeString(mask->shape()) +
                                    " does not tile x " + shapeString(x.shape()));
    const float* maskValues = mask ? valuesOf(*mask).data() : nullptr;
    const float lowest = std::numeric_limits<float>::lowest();
    for (Eigen::Index r = 0; r < in.rows(); ++r) {
        Eigen::RowVectorXf row = in.row(r);
        if (maskValues) {
            const float* m = maskValues + (r % maskRows) * in.cols();
            for (Eigen::Index c = 0; c < row.size(); ++c)
                if (m[c] == 0.0f) row[c] = lowest;
        }
        const float top = sink ? std::max(row.maxCoeff(), *sink) : row.maxCoeff();
        row.array() = (row.array() - top).exp();
        const float total = row.sum() + (sink ? std::exp(*sink - top) : 0.0f);
        result.row(r) = row / total;
    }
}
} // namespace

void CpuBackend::softmax(const DeviceTensor& x, const DeviceTensor* mask, DeviceTensor& out) {
    rowSoftmax(x, mask, std::nullopt, out, "softmax");
}

void CpuBackend::sinkSoftmax(const DeviceTensor& x, const DeviceTensor* mask, float sink,
                             DeviceTensor& out) {
    rowSoftmax(x, mask, sink, out, "sinkSoftmax");
}

void CpuBackend::matmul(const DeviceTensor& a, const DeviceTensor& b, bool transposeB, float alpha,
                        DeviceTensor& out) {
    const Batched as = batchedShape(a, "matmul"), bs = batchedShape(b, "matmul");
    const int64_t inner = transposeB ? bs.cols : bs.rows, n = transposeB ? bs.rows : bs.cols;
    if (as.cols != inner || as.batch % bs.batch || out.size() != as.batch * as.rows * n)
        throw std::invalid_argument("matmul: " + shapeString(a.shape()) + " · " + shapeString(b.shape()) +
                                    (transposeB ? "ᵀ" : "") + " → " + shapeString(out.shape()) + " do not fit");
    const float* av = valuesOf(a).data();
    const float* bv = valuesOf(b).data();
    float* ov = valuesOf(out).data();
    const int64_t group = as.batch / bs.batch;
#pragma omp parallel for schedule(dynamic) if (as.batch > 1)
    for (int64_t i = 0; i < as.batch; ++i)
        gemm(av + i * as.rows * as.cols, bv + (i / group) * bs.rows * bs.cols, ov + i * as.rows * n, as.rows,
             as.cols, n, transposeB, alpha);
}

void CpuBackend::splitHeads(const DeviceTensor& x, int heads, DeviceTensor& out) {
    requireSameSize(x, out, "splitHeads");
    const ConstMatrixMap in = matrixOf(x);
    if (heads <= 0 || in.cols() % heads)
        throw std::invalid_argument("splitHeads: " + std::to_string(heads) + " heads do not divide x " +
                                    shapeString(x.shape()));
    const int64_t tokens = in.rows(), d = in.cols() / heads;
    float* o = valuesOf(out).data();
    for (int h = 0; h < heads; ++h)
        MatrixMap(o + h * tokens * d, tokens, d) = in.middleCols(h * d, d);
}

void CpuBackend::mergeHeads(const DeviceTensor& x, DeviceTensor& out) {
    requireSameSize(x, out, "mergeHeads");
    const Batched s = batchedShape(x, "mergeHeads");
    if (out.shape().back() != s.batch * s.cols)
        throw std::invalid_argument("mergeHeads: out " + shapeString(out.shape()) + " does not fit x " +
                                    shapeString(x.shape()));
    const float* in = valuesOf(x).data();
    MatrixMap result = mutableMatrixOf(out);
    for (int64_t h = 0; h < s.batch; ++h)
        result.middleCols(h * s.cols, s.cols) = ConstMatrixMap(in + h * s.rows * s.cols, s.rows, s.cols);
}

void CpuBackend::copyRows(const DeviceTensor& src, int64_t srcRow, int64_t rows, DeviceTensor& dst, int64_t dstRow) {
    const ConstMatrixMap from = matrixOf(src);
    MatrixMap to = mutableMatrixOf(dst);
    if (from.cols() != to.cols() || srcRow < 0 || dstRow < 0 || rows < 0 || srcRow + rows > from.rows() ||
        dstRow + rows > to.rows())
        throw std::invalid_argument("copyRows: rows out of range");
    to.middleRows(dstRow, rows) = from.middleRows(srcRow, rows);
}

void CpuBackend::scatterAddRows(const DeviceTensor& src, std::span<const int32_t> ids, std::span<const float> weights,
                                DeviceTensor& out) {
    const ConstMatrixMap from = matrixOf(src);
    MatrixMap to = mutableMatrixOf(out);
    if (ids.size() != std::size_t(from.rows()) || weights.size() != ids.size() || from.cols() != to.cols())
        throw std::invalid_argument("scatterAddRows: ids, weights and rows disagree");
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] < 0 || ids[i] >= to.rows()) throw std::out_of_range("scatterAddRows: id out of range");
        to.row(ids[i]) += weights[i] * from.row(Eigen::Index(i));
    }
}

void CpuBackend::causalLinearAttention(const DeviceTensor& phiQ, const DeviceTensor& phiK, const DeviceTensor& v,
                                       float eps, DeviceTensor& out) {
    const Batched qs = batchedShape(phiQ, "causalLinearAttention"), vs = batchedShape(v, "causalLinearAttention");
    if (phiK.shape() != phiQ.shape() || vs.batch != qs.batch || vs.rows != qs.rows || out.size() != v.size())
        throw std::invalid_argument("causalLinearAttention: phiQ " + shapeString(phiQ.shape()) + ", phiK " +
                                    shapeString(phiK.shape()) + ", v " + shapeString(v.shape()) + " and out " +
                                    shapeString(out.shape()) + " do not fit");
    const float* q = valuesOf(phiQ).data();
    const float* k = valuesOf(phiK).data();
    const float* vv = valuesOf(v).data();
    float* o = valuesOf(out).data();
    const int64_t tokens = qs.rows, m = qs.cols, d = vs.cols;
#pragma omp parallel for if (qs.batch > 1)
    for (int64_t b = 0; b < qs.batch; ++b) {
        RowMatrix state = RowMatrix::Zero(m, d); // Σ φk_s v_sᵀ
        Eigen::RowVectorXf normalizer = Eigen::RowVectorXf::Zero(m);
        for (int64_t t = 0; t < tokens; ++t) {
            const Eigen::Map<const Eigen::RowVectorXf> qt(q + (b * tokens + t) * m, m), kt(k + (b * tokens + t) * m, m);
            const Eigen::Map<const Eigen::RowVectorXf> vt(vv + (b * tokens + t) * d, d);
            state.noalias() += kt.transpose() * vt;
            normalizer += kt;
            Eigen::Map<Eigen::RowVectorXf>(o + (b * tokens + t) * d, d) = (qt * state) / (qt.dot(normalizer) + eps);
        }
    }
}
} // namespace headlight::cpu
