#pragma once
// The CPU backend: every op in plain Eigen, executed at once. It is the reference that every
// Vulkan kernel is checked against, so clarity wins over cleverness here, except for the GEMMs
// and the per-head attention loop, which carry nearly all the work and run multi-threaded.

#include "backend/backend.h"

namespace headlight::cpu {

// Host storage of a CPU DeviceTensor.
struct HostStorage : DeviceStorage {
    std::vector<float> values;
};

// The f32 values behind a CPU DeviceTensor (throws std::logic_error for another backend's).
std::vector<float>& valuesOf(const DeviceTensor& tensor);

class CpuBackend final : public Backend {
public:
    BackendKind kind() const override { return BackendKind::Cpu; }
    std::string deviceName() const override;

    DeviceTensor upload(const Tensor& host) override;
    DeviceTensor allocate(std::vector<int64_t> shape) override;
    Tensor download(const DeviceTensor& tensor) override;
    void finish() override {}

    void linear(const DeviceTensor& x, const DeviceTensor& w, const DeviceTensor* bias, DeviceTensor& out) override;
    void add(const DeviceTensor& a, const DeviceTensor& b, DeviceTensor& out) override;
    void gatherRows(const DeviceTensor& table, std::span<const int32_t> ids, DeviceTensor& out) override;
    void layerNorm(const DeviceTensor& x, const DeviceTensor& gamma, const DeviceTensor& beta, float eps,
                   DeviceTensor& out) override;
    void rmsNorm(const DeviceTensor& x, const DeviceTensor& gamma, float eps, DeviceTensor& out) override;
    void activation(const DeviceTensor& x, Activation kind, DeviceTensor& out) override;
    void gatedActivation(const DeviceTensor& gate, const DeviceTensor& up, Activation kind,
                         DeviceTensor& out) override;
    void rope(DeviceTensor& x, int heads, int headDim, std::span<const int32_t> positions, double theta) override;
    void attention(const DeviceTensor& q, const DeviceTensor& k, const DeviceTensor& v, const AttentionParams& params,
                   DeviceTensor& context, DeviceTensor* scores, DeviceTensor* probs) override;
};
} // namespace headlight::cpu
