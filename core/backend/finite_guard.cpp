#include "backend/finite_guard.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace headlight {
namespace {

const char* mapOpName(MapOp op) {
    static constexpr const char* kNames[] = {"Affine", "Exp",    "Elu1", "Relu", "Sigmoid", "Cos",
                                             "Sin",    "Square", "Sqrt", "Log",  "Tanh"};
    return kNames[int(op)];
}

const char* binaryOpName(BinaryOp op) {
    static constexpr const char* kNames[] = {"Add", "Sub", "Mul", "Div"};
    return kNames[int(op)];
}

class FiniteGuard final : public Backend {
public:
    explicit FiniteGuard(std::unique_ptr<Backend> inner)
        : inner_(std::move(inner)) {}

    BackendKind kind() const override { return inner_->kind(); }
    std::string deviceName() const override { return inner_->deviceName(); }
    std::optional<DeviceMemory> deviceMemory() const override { return inner_->deviceMemory(); }
    bool keepsWeights16Bit() const override { return inner_->keepsWeights16Bit(); }

    DeviceTensor upload(const Tensor& host) override {
        DeviceTensor out = inner_->upload(host);
        check(out, "upload");
        return out;
    }
    DeviceTensor allocate(std::vector<int64_t> shape) override {
        return inner_->allocate(std::move(shape));
    }
    // A stored weight keeps its 16-bit dtype and cannot be downloaded as f32; the reader has
    // already refused non-finite weights (model/weight_reader.h).
    DeviceTensor uploadStored(const io::StoredMatrix& matrix) override {
        return inner_->uploadStored(matrix);
    }
    Tensor download(const DeviceTensor& tensor) override { return inner_->download(tensor); }
    void finish() override { inner_->finish(); }

    void linear(const DeviceTensor& x, const DeviceTensor& w, const DeviceTensor* bias,
                DeviceTensor& out) override {
        inner_->linear(x, w, bias, out);
        check(out, "linear");
    }
    void gatherRows(const DeviceTensor& table, std::span<const int32_t> ids,
                    DeviceTensor& out) override {
        inner_->gatherRows(table, ids, out);
        check(out, "gatherRows");
    }
    void layerNorm(const DeviceTensor& x, const DeviceTensor& gamma, const DeviceTensor& beta,
                   float eps, DeviceTensor& out) override {
        inner_->layerNorm(x, gamma, beta, eps, out);
        check(out, "layerNorm");
    }
    void rmsNorm(const DeviceTensor& x, const DeviceTensor& gamma, float eps,
                 DeviceTensor& out) override {
        inner_->rmsNorm(x, gamma, eps, out);
        check(out, "rmsNorm");
    }
    void activation(const DeviceTensor& x, Activation kind, DeviceTensor& out) override {
        inner_->activation(x, kind, out);
        check(out, "activation");
    }
    void gatedActivation(const DeviceTensor& gate, const DeviceTensor& up, Activation kind,
                         DeviceTensor& out) override {
        inner_->gatedActivation(gate, up, kind, out);
        check(out, "gatedActivation");
    }
    using Backend::rope;
    void rope(DeviceTensor& x, const RotaryParams& params,
              std::span<const int32_t> positions) override {
        inner_->rope(x, params, positions);
        check(x, "rope");
    }
    void attention(const DeviceTensor& q, const DeviceTensor& k, const DeviceTensor& v,
                   const AttentionParams& params, DeviceTensor& context, DeviceTensor* scores,
                   DeviceTensor* probs) override {
        inner_->attention(q, k, v, params, context, scores, probs);
        if (scores) check(*scores, "attention (scores)");
        if (probs) check(*probs, "attention (probabilities)");
        check(context, "attention (context)");
    }
    void binary(const DeviceTensor& a, const DeviceTensor& b, BinaryOp op,
                DeviceTensor& out) override {
        inner_->binary(a, b, op, out);
        check(out, std::string("binary(") + binaryOpName(op) + ")");
    }
    void map(const DeviceTensor& x, MapOp op, float alpha, float beta, DeviceTensor& out) override {
        inner_->map(x, op, alpha, beta, out);
        check(out, std::string("map(") + mapOpName(op) + ")");
    }
    void reduceRows(const DeviceTensor& x, bool sum, DeviceTensor& out) override {
        inner_->reduceRows(x, sum, out);
        check(out, sum ? "reduceRows(sum)" : "reduceRows(max)");
    }
    void softmax(const DeviceTensor& x, const DeviceTensor* mask, DeviceTensor& out) override {
        inner_->softmax(x, mask, out);
        check(out, "softmax");
    }
    void sinkSoftmax(const DeviceTensor& x, const DeviceTensor* mask, float sink,
                     DeviceTensor& out) override {
        inner_->sinkSoftmax(x, mask, sink, out);
        check(out, "sinkSoftmax");
    }
    void matmul(const DeviceTensor& a, const DeviceTensor& b, bool transposeB, float alpha,
                DeviceTensor& out) override {
        inner_->matmul(a, b, transposeB, alpha, out);
        check(out, "matmul");
    }
    void splitHeads(const DeviceTensor& x, int heads, DeviceTensor& out) override {
        inner_->splitHeads(x, heads, out);
        check(out, "splitHeads");
    }
    void mergeHeads(const DeviceTensor& x, DeviceTensor& out) override {
        inner_->mergeHeads(x, out);
        check(out, "mergeHeads");
    }
    // A copy makes no new value, and dst's other rows may still be unwritten (allocate leaves
    // contents undefined), so it is not checked.
    void copyRows(const DeviceTensor& src, int64_t srcRow, int64_t rows, DeviceTensor& dst,
                  int64_t dstRow) override {
        inner_->copyRows(src, srcRow, rows, dst, dstRow);
    }
    void scatterAddRows(const DeviceTensor& src, std::span<const int32_t> ids,
                        std::span<const float> weights, DeviceTensor& out) override {
        inner_->scatterAddRows(src, ids, weights, out);
        check(out, "scatterAddRows");
    }
    void causalLinearAttention(const DeviceTensor& phiQ, const DeviceTensor& phiK,
                               const DeviceTensor& v, float eps, DeviceTensor& out) override {
        inner_->causalLinearAttention(phiQ, phiK, v, eps, out);
        check(out, "causalLinearAttention");
    }
    void sparseAttention(const DeviceTensor& q, const DeviceTensor& k, const DeviceTensor& v,
                         const SparsePattern& pattern, float scale,
                         std::span<const float> alibiSlopes, DeviceTensor& context,
                         DeviceTensor* weights) override {
        inner_->sparseAttention(q, k, v, pattern, scale, alibiSlopes, context, weights);
        if (weights) check(*weights, "sparseAttention (weights)");
        check(context, "sparseAttention (context)");
    }

private:
    void check(const DeviceTensor& tensor, const std::string& op) {
        const Tensor values = inner_->download(tensor);
        for (std::size_t i = 0; i < values.size(); ++i) {
            const float value = values.data()[i];
            if (std::isfinite(value)) continue;
            throw NonFiniteValue("non-finite value (" + std::to_string(value) + ") at index " +
                                 std::to_string(i) + " of " + values.shapeString() +
                                 ", first made by " + op);
        }
    }

    std::unique_ptr<Backend> inner_;
};
} // namespace

std::unique_ptr<Backend> makeFiniteGuard(std::unique_ptr<Backend> inner) {
    return std::make_unique<FiniteGuard>(std::move(inner));
}

bool finiteGuardEnabled() {
    const char* flag = std::getenv("HEADLIGHT_FINITE_GUARD");
    if (flag && *flag) return std::strcmp(flag, "0") != 0;
#ifndef NDEBUG
    return true;
#else
    return false;
#endif
}

std::unique_ptr<Backend> guardedWhenEnabled(std::unique_ptr<Backend> backend) {
    return finiteGuardEnabled() ? makeFiniteGuard(std::move(backend)) : std::move(backend);
}
} // namespace headlight
