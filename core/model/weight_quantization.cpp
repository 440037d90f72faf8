#include "model/weight_quantization.h"

#include "io/checkpoint.h"
#include "model/memory_budget.h"

#include <algorithm>
#include <cmath>

namespace headlight {
namespace {

constexpr float kInt8Max = 127.0f;

// The int8 values and per-row scales a quantised StoredMatrix points into.
struct Int8Weight {
    std::vector<int8_t> values;
    std::vector<float> scales;
};

struct ErrorSums {
    double error = 0.0; // Σ (w − ŵ)²
    double norm = 0.0;  // Σ w²
};

// One row of a linear weight as f32, from its mapped file or its widened tensor.
void readRow(const HostLinear& linear, int64_t row, int64_t cols, std::vector<float>& out) {
    if (linear.stored.valid()) {
        io::widenRows(linear.stored, row, 1, out.data());
        return;
    }
    const float* from = linear.weight.data() + row * cols;
    std::copy(from, from + cols, out.begin());
}

void quantize(HostLinear& linear, ErrorSums& sums, double& bytes) {
    if (!linear.present()) return;
    const std::vector<int64_t> shape =
        linear.stored.valid() ? linear.stored.shape() : linear.weight.shape();
    const int64_t rows = shape[0], cols = shape[1];
    auto int8 = std::make_shared<Int8Weight>();
    int8->values.resize(std::size_t(rows * cols));
    int8->scales.resize(std::size_t(rows));
    std::vector<float> row(static_cast<std::size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
        readRow(linear, r, cols, row);
        float largest = 0.0f;
        for (float v : row)
            largest = std::max(largest, std::abs(v));
        const float scale = largest > 0.0f ? largest / kInt8Max : 1.0f;
        int8->scales[std::size_t(r)] = scale;
        for (int64_t c = 0; c < cols; ++c) {
            const float v = row[std::size_t(c)];
            const float q = std::clamp(std::nearbyint(v / scale), -kInt8Max, kInt8Max);
            int8->values[std::size_t(r * cols + c)] = int8_t(q);
            const double back = double(q * scale); // as io::widenRows computes it
            sums.error += (double(v) - back) * (double(v) - back);
            sums.norm += double(v) * double(v);
        }
    }
    bytes += double(rows * cols) + double(rows) * 4.0;
    linear.weight = Tensor();
    linear.stored = {io::DType::I8, reinterpret_cast<const std::byte*>(int8->values.data()),
                     rows,          cols,
                     int8,          int8->scales.data()};
}

void quantize(HostFfn& ffn, ErrorSums& sums, double& bytes) {
    for (HostLinear* linear : {&ffn.up, &ffn.gate, &ffn.down})
        quantize(*linear, sums, bytes);
}
} // namespace

QuantizationReport quantizeInt8(HostWeights& weights) {
    QuantizationReport report;
    for (HostLayer& layer : weights.layers) {
        ErrorSums sums;
        for (HostLinear* linear : {&layer.query, &layer.key, &layer.value, &layer.output, &layer.up,
                                   &layer.gate, &layer.down})
            quantize(*linear, sums, report.int8Bytes);
        quantize(layer.ffnPre, sums, report.int8Bytes);
        for (HostFfn& expert : layer.experts)
            quantize(expert, sums, report.int8Bytes);
        report.layerRelativeError.push_back(sums.norm > 0.0 ? std::sqrt(sums.error / sums.norm)
                                                            : 0.0);
    }
    return report;
}

std::unique_ptr<TransformerModel> loadModelInt8(const std::string& folder, Backend& backend,
                                                QuantizationReport* report) {
    ModelSpec spec = loadModelConfig(folder);
    const io::Checkpoint checkpoint(folder);
    checkLoadBudget(checkpoint, spec, backend.kind() == BackendKind::Cpu);
    // Why f32: the Vulkan backend widens int8 weights on upload (only 16-bit ones stay stored).
    if (const auto device = backend.deviceMemory())
        checkDeviceLoadBudget(checkpoint, spec, *device, false);
    HostWeights weights = readWeights(checkpoint, spec);
    QuantizationReport made = quantizeInt8(weights);
    if (report) *report = std::move(made);
    return std::make_unique<TransformerModel>(std::move(spec), weights, backend);
}
} // namespace headlight
