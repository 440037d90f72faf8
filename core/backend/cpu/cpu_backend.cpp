#include "cpu_backend.h"
#include "cpu_gemm.h"

#include "backend/finite_guard.h"
#include "backend/key_mask.h"

#include <cmath>
#include <limits>
#include <omp.h>
#include <unsupported/Eigen/SpecialFunctions>
#include <stdexcept>

namespace headlight::cpu {
namespace {

// GELU, exact: x·Φ(x) = ½x(1 + erf(x/√2)) (Hendrycks & Gimpel 2016; HF "gelu").
float geluErf(float x) { return 0.5f * x * (1.0f + std::erf(x * float(M_SQRT1_2))); }
// GELU, tanh approximation (HF "gelu_new", GPT-2): ½x(1 + tanh(√(2/π)(x + 0.044715x³))).
float geluTanh(float x) {
    const float k = 0.7978845608028654f; // √(2/π)
    return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
}
float silu(float x) { return x / (1.0f + std::exp(-x)); }

float activate(float x, Activation kind) {
    switch (kind) {
    case Activation::Gelu: return geluErf(x);
    case Activation::GeluTanh: return geluTanh(x);
    case Activation::Relu: return x > 0.0f ? x : 0.0f;
    case Activation::Silu: return silu(x);
    }
    return x;
}

// Why the fused attention runs a block of query rows at a time: a head's [T, T] scores would be
// 4 GB at T = 32,768, while a block of whole rows keeps each row's softmax exact in [256, T].
constexpr int64_t kQueryBlock = 256;

// Pre-softmax scores of queries [q0, q0 + rows) of one head over keys [k0, k0 + S.cols()), S
// holding scale·Q Kᵀ on entry: soft-capped, c·tanh(S/c), when p.softcap > 0, and masked entries
// set to the lowest float. Per query, the causal and window rules leave a contiguous key range
// [first, last]; padding masks single keys.
void maskScores(int64_t q0, int64_t k0, int64_t tokens, const AttentionParams& p,
                RowMatrix& scores) {
    const int64_t span = scores.cols();
    if (p.softcap > 0.0f)
        scores = scores.unaryExpr([c = p.softcap](float s) { return c * std::tanh(s / c); });
    const float lowest = std::numeric_limits<float>::lowest();
    const KeyMask mask{p.causal, p.slidingWindow, p.keyValid};
    for (int64_t r = 0; r < scores.rows(); ++r) {
        const int64_t first = mask.firstKey(q0 + r) - k0, last = mask.lastKey(q0 + r, tokens) - k0;
        scores.row(r).head(first).setConstant(lowest);
        scores.row(r).tail(span - 1 - last).setConstant(lowest);
    }
    for (int64_t j = 0; j < span; ++j)
        if (!mask.valid(k0 + j)) scores.col(Eigen::Index(j)).setConstant(lowest);
}

// A block's rows [rows, span] written into a head's [T, T] slice at keys [k0, k0 + span), with
// `outside` in the other columns (what the dense rule gives there: the lowest float or 0).
void writeRows(const RowMatrix& block, int64_t k0, float outside, float* out, int64_t tokens) {
    MatrixMap rows(out, block.rows(), tokens);
    rows.leftCols(k0).setConstant(outside);
    rows.middleCols(k0, block.cols()) = block;
    rows.rightCols(tokens - k0 - block.cols()).setConstant(outside);
}
} // namespace

std::vector<float>& valuesOf(const DeviceTensor& tensor) {
    auto* host = dynamic_cast<HostStorage*>(tensor.storage());
    if (host) return host->values;
    if (storedMatrixOf(tensor))
        throw std::logic_error(
            "a weight kept in its stored dtype reached an op other than linear or gatherRows");
    throw std::logic_error("a tensor of another backend was given to the CPU backend");
}

const io::StoredMatrix* storedMatrixOf(const DeviceTensor& tensor) {
    const auto* stored = dynamic_cast<const StoredStorage*>(tensor.storage());
    return stored ? &stored->matrix : nullptr;
}

std::string CpuBackend::deviceName() const {
    return "CPU (" + gemmLibrary() + ", " + std::to_string(omp_get_max_threads()) + " threads)";
}

DeviceTensor CpuBackend::upload(const Tensor& host) {
    auto storage = std::make_shared<HostStorage>();
    storage->values.assign(host.values().begin(), host.values().end());
    return DeviceTensor(host.shape(), storage);
}

DeviceTensor CpuBackend::allocate(std::vector<int64_t> shape) {
    auto storage = std::make_shared<HostStorage>();
    storage->values.resize(std::size_t(elementCount(shape)));
    return DeviceTensor(std::move(shape), storage);
}

DeviceTensor CpuBackend::uploadStored(const io::StoredMatrix& matrix) {
    auto storage = std::make_shared<StoredStorage>();
    storage->matrix = matrix;
    return DeviceTensor(matrix.shape(), storage);
}

Tensor CpuBackend::download(const DeviceTensor& tensor) {
    if (const io::StoredMatrix* stored = storedMatrixOf(tensor)) {
        Tensor widened(stored->shape());
        io::widenRows(*stored, 0, stored->rows, widened.data());
        return widened;
    }
    return Tensor(tensor.shape(), valuesOf(tensor));
}

void CpuBackend::linear(const DeviceTensor& x, const DeviceTensor& w, const DeviceTensor* bias, DeviceTensor& out) {
    const ConstMatrixMap input = matrixOf(x);
    if (input.cols() != w.shape().back())
        throw std::invalid_argument("linear: input " + shapeString(x.shape()) + " does not fit weight " +
                                    shapeString(w.shape()));
    MatrixMap result = mutableMatrixOf(out);
    if (const io::StoredMatrix* stored = storedMatrixOf(w))
        gemmStored(input.data(), *stored, result.data(), input.rows());
    else
        gemm(input.data(), valuesOf(w).data(), result.data(), input.rows(), input.cols(), w.dim(0),
             true, 1.0f);
    if (bias) result.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(valuesOf(*bias).data(), bias->size());
}

void CpuBackend::gatherRows(const DeviceTensor& table, std::span<const int32_t> ids, DeviceTensor& out) {
    const io::StoredMatrix* stored = storedMatrixOf(table);
    MatrixMap result = mutableMatrixOf(out);
    for (std::size_t t = 0; t < ids.size(); ++t) {
        if (ids[t] < 0 || ids[t] >= table.dim(0))
            throw std::out_of_range("gatherRows: id out of range");
        if (stored)
            io::widenRows(*stored, ids[t], 1,
                          result.row(Eigen::Index(t)).data()); // one row, read in place
        else
            result.row(Eigen::Index(t)) = matrixOf(table).row(ids[t]);
    }
}

void CpuBackend::layerNorm(const DeviceTensor& x, const DeviceTensor& gamma, const DeviceTensor& beta, float eps,
                           DeviceTensor& out) {
    requireSameSize(x, out, "layerNorm");
    const ConstMatrixMap input = matrixOf(x);
    MatrixMap result = mutableMatrixOf(out);
    const auto g = Eigen::Map<const Eigen::RowVectorXf>(valuesOf(gamma).data(), gamma.size());
    const auto b = Eigen::Map<const Eigen::RowVectorXf>(valuesOf(beta).data(), beta.size());
    for (Eigen::Index r = 0; r < input.rows(); ++r) {
        const Eigen::RowVectorXf row = input.row(r);
        const float mean = row.mean();
        const float variance = (row.array() - mean).square().mean(); // biased, as torch
        result.row(r) = ((row.array() - mean) / std::sqrt(variance + eps)).matrix().cwiseProduct(g) + b;
    }
}

void CpuBackend::rmsNorm(const DeviceTensor& x, const DeviceTensor& gamma, float eps, DeviceTensor& out) {
    requireSameSize(x, out, "rmsNorm");
    const ConstMatrixMap input = matrixOf(x);
    MatrixMap result = mutableMatrixOf(out);
    const auto g = Eigen::Map<const Eigen::RowVectorXf>(valuesOf(gamma).data(), gamma.size());
    for (Eigen::Index r = 0; r < input.rows(); ++r) {
        const Eigen::RowVectorXf row = input.row(r);
        const float inverseRms = 1.0f / std::sqrt(row.squaredNorm() / float(row.size()) + eps);
        result.row(r) = (row * inverseRms).cwiseProduct(g);
    }
}

void CpuBackend::activation(const DeviceTensor& x, Activation kind, DeviceTensor& out) {
    requireSameSize(x, out, "activation");
    const auto& in = valuesOf(x);
    auto& result = valuesOf(out);
    if (kind == Activation::Gelu) {
        // Why: Eigen's vectorised erf is several times faster than std::erf per element, and
        // accurate to a few ulp, far inside the 1e-4 tolerance against PyTorch.
        const Eigen::Map<const Eigen::ArrayXf> input(in.data(), Eigen::Index(in.size()));
        Eigen::Map<Eigen::ArrayXf> output(result.data(), Eigen::Index(result.size()));
        output = 0.5f * input * (1.0f + (input * float(M_SQRT1_2)).erf());
        return;
    }
#pragma omp parallel for if (in.size() >= kParallelMinElements)
    for (std::size_t i = 0; i < in.size(); ++i) result[i] = activate(in[i], kind);
}

void CpuBackend::gatedActivation(const DeviceTensor& gate, const DeviceTensor& up, Activation kind,
                                 DeviceTensor& out) {
    requireSameSize(gate, up, "gatedActivation");
    requireSameSize(gate, out, "gatedActivation");
    const auto& g = valuesOf(gate);
    const auto& u = valuesOf(up);
    auto& result = valuesOf(out);
#pragma omp parallel for if (g.size() >= kParallelMinElements)
    for (std::size_t i = 0; i < g.size(); ++i) result[i] = activate(g[i], kind) * u[i];
}

void CpuBackend::rope(DeviceTensor& x, const RotaryParams& p, std::span<const int32_t> positions) {
    MatrixMap values = mutableMatrixOf(x);
    const int half = p.rotaryDim / 2;
    // Feature offsets of pair i within a head: (i, i + half) rotate-half, (2i, 2i + 1) interleaved.
    const int step = p.interleaved ? 2 : 1, partner = p.interleaved ? 1 : half;
    // HF: inv_freq = 1 / theta^(2i/d) held in f32; angle = position · inv_freq in f32.
    std::vector<float> inverseFrequency;
    for (int i = 0; i < half; ++i)
        inverseFrequency.push_back(float(1.0 / std::pow(p.theta, 2.0 * i / p.rotaryDim)));
    for (Eigen::Index t = 0; t < values.rows(); ++t)
        for (int h = 0; h < p.heads; ++h)
            for (int i = 0; i < half; ++i) {
                const float angle = float(positions[std::size_t(t)]) * inverseFrequency[std::size_t(i)];
                const float c = std::cos(angle), s = std::sin(angle);
                float& a = values(t, h * p.headDim + i * step);
                float& b = values(t, h * p.headDim + i * step + partner);
                const float x1 = a, x2 = b;
                a = x1 * c - x2 * s;
                b = x2 * c + x1 * s;
            }
}

void CpuBackend::attention(const DeviceTensor& q, const DeviceTensor& k, const DeviceTensor& v,
                           const AttentionParams& p, DeviceTensor& context, DeviceTensor* scores,
                           DeviceTensor* probs) {
    const ConstMatrixMap qm = matrixOf(q), km = matrixOf(k), vm = matrixOf(v);
    MatrixMap cm = mutableMatrixOf(context);
    const int64_t tokens = qm.rows(), d = p.headDim;
    const int group = p.heads / p.kvHeads;
    float* scoresOut = scores ? valuesOf(*scores).data() : nullptr;
    float* probsOut = probs ? valuesOf(*probs).data() : nullptr;
    const int64_t blocks = (tokens + kQueryBlock - 1) / kQueryBlock;
#pragma omp parallel for schedule(dynamic)
    for (int64_t task = 0; task < p.heads * blocks; ++task) {
        const int64_t h = task / blocks, q0 = task % blocks * kQueryBlock;
        const int64_t rows = std::min(kQueryBlock, tokens - q0);
        const int64_t kvColumn = h / group * d;
        // Why only these keys: causality and the window leave the block no others, which halves
        // a causal pass and makes a windowed one O(T·W).
        const KeyMask mask{p.causal, p.slidingWindow, p.keyValid};
        const int64_t k0 = mask.firstKey(q0), k1 = mask.lastKey(q0 + rows - 1, tokens) + 1;
        const int64_t span = k1 - k0, firstRow = (h * tokens + q0) * tokens; // in [H, T, T]
        // Why in a block of its own, not in place in the captured map: Eigen's vectorised exp and
        // sums treat a row's first elements by its address's alignment, so rows at the map's
        // varying offsets would make the same pass differ in the last bit from run to run.
        RowMatrix s(rows, span);
        gemmStrided(qm.data() + q0 * qm.cols() + h * d, qm.cols(),
                    km.data() + k0 * km.cols() + kvColumn, km.cols(), s.data(), span, rows, d,
                    span, true, p.scale);
        maskScores(q0, k0, tokens, p, s);
        if (scoresOut)
            writeRows(s, k0, std::numeric_limits<float>::lowest(), scoresOut + firstRow, tokens);
        // Row softmax, max-subtracted for stability.
        for (int64_t i = 0; i < rows; ++i) {
            auto row = s.row(i);
            row.array() = (row.array() - row.maxCoeff()).exp();
            row /= row.sum();
        }
        if (probsOut) writeRows(s, k0, 0.0f, probsOut + firstRow, tokens);
        gemmStrided(s.data(), span, vm.data() + k0 * vm.cols() + kvColumn, vm.cols(),
                    cm.data() + q0 * cm.cols() + h * d, cm.cols(), rows, span, d, false, 1.0f);
    }
}
} // namespace headlight::cpu

namespace headlight {
std::unique_ptr<Backend> makeCpuBackend() {
    return guardedWhenEnabled(std::make_unique<cpu::CpuBackend>());
}
} // namespace headlight
