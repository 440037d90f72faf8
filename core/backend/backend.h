#pragma once
// [SECTION] Backend: the op vocabulary every model is written against
//
// The model code (core/model) calls only these ops, so the same code runs on the CPU backend
// (Eigen, the readable reference) and the Vulkan backend (compute shaders). Each op states its
// shapes; tensors are row-major f32. `out` may alias an input only where the op says so.
// A backend may record work and run it later (Vulkan records one command buffer per forward
// pass): download() and finish() run whatever is pending.
//
// Index: DeviceTensor · AttentionParams · Backend (memory, linear algebra, norms, activations,
// positions, attention) · makeBackend

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/backend_choice.h"
#include "model/model_spec.h"
#include "tensor/tensor.h"

namespace headlight {
namespace vk {
class Context;
}

// Storage owned by a backend; model code never looks inside.
class DeviceStorage {
public:
    virtual ~DeviceStorage() = default;
};

// A tensor that lives where its backend keeps data (host memory or a device buffer).
class DeviceTensor {
public:
    DeviceTensor() = default;
    DeviceTensor(std::vector<int64_t> shape, std::shared_ptr<DeviceStorage> storage)
        : shape_(std::move(shape)), storage_(std::move(storage)) {}

    const std::vector<int64_t>& shape() const { return shape_; }
    int64_t dim(std::size_t axis) const { return shape_.at(axis); }
    int64_t size() const { return elementCount(shape_); }
    bool valid() const { return storage_ != nullptr; }
    DeviceStorage* storage() const { return storage_.get(); }

private:
    std::vector<int64_t> shape_;
    std::shared_ptr<DeviceStorage> storage_;
};

// Scaled dot-product attention over T tokens, grouped-query aware.
// A key j is masked for query i when keyValid[j] == 0, or (causal) j > i, or (slidingWindow > 0)
// i - j >= slidingWindow. Masked scores are replaced by the lowest f32 before the softmax, as
// Hugging Face does, so a row whose keys are all masked becomes uniform rather than NaN.
struct AttentionParams {
    int heads = 0;
    int kvHeads = 0; // query head h reads key/value head h / (heads / kvHeads)
    int headDim = 0;
    float scale = 1.0f; // multiplies q·k (usually 1/sqrt(headDim))
    bool causal = false;
    int slidingWindow = 0;         // 0: no window
    std::vector<uint8_t> keyValid; // [T]; empty means all valid
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual BackendKind kind() const = 0;
    virtual std::string deviceName() const = 0;

    // [SECTION] memory
    virtual DeviceTensor upload(const Tensor& host) = 0;
    virtual DeviceTensor allocate(std::vector<int64_t> shape) = 0; // contents undefined
    virtual Tensor download(const DeviceTensor& tensor) = 0;       // runs pending work first
    virtual void finish() = 0;                                    // runs pending work

    // [SECTION] linear algebra
    // out[M,N] = x[M,K] · w[N,K]ᵀ (+ bias[N]); w in nn.Linear layout.
    virtual void linear(const DeviceTensor& x, const DeviceTensor& w, const DeviceTensor* bias,
                        DeviceTensor& out) = 0;
    // out[M,N] = a[M,N] + b[R,N] with b's rows repeating (R divides M); out may alias a.
    virtual void add(const DeviceTensor& a, const DeviceTensor& b, DeviceTensor& out) = 0;
    // out[T,D] = table[V,D] rows at ids[T]; every id must be < V (checked by the caller).
    virtual void gatherRows(const DeviceTensor& table, std::span<const int32_t> ids, DeviceTensor& out) = 0;

    // [SECTION] norms (over the last dimension D of x[T,D]; out may alias x)
    virtual void layerNorm(const DeviceTensor& x, const DeviceTensor& gamma, const DeviceTensor& beta, float eps,
                           DeviceTensor& out) = 0;
    virtual void rmsNorm(const DeviceTensor& x, const DeviceTensor& gamma, float eps, DeviceTensor& out) = 0;

    // [SECTION] activations (elementwise; out may alias x)
    virtual void activation(const DeviceTensor& x, Activation kind, DeviceTensor& out) = 0;
    // out = act(gate) ⊙ up (SwiGLU when act is SiLU); out may alias gate.
    virtual void gatedActivation(const DeviceTensor& gate, const DeviceTensor& up, Activation kind,
                                 DeviceTensor& out) = 0;

    // [SECTION] positions
    // Rotary embedding in Hugging Face's rotate-half layout on x[T, heads·headDim], in place:
    // for pair (i, i + headDim/2) of each head, angle = positions[t] · theta^(-2i/headDim).
    virtual void rope(DeviceTensor& x, int heads, int headDim, std::span<const int32_t> positions, double theta) = 0;

    // [SECTION] attention
    // q[T, heads·headDim], k and v [T, kvHeads·headDim] → context[T, heads·headDim].
    // When given, scores [heads,T,T] receives the scaled, masked pre-softmax scores and probs
    // [heads,T,T] the softmax probabilities actually used.
    virtual void attention(const DeviceTensor& q, const DeviceTensor& k, const DeviceTensor& v,
                           const AttentionParams& params, DeviceTensor& context, DeviceTensor* scores,
                           DeviceTensor* probs) = 0;
};

std::unique_ptr<Backend> makeCpuBackend();
std::unique_ptr<Backend> makeVulkanBackend(std::shared_ptr<vk::Context> context);
} // namespace headlight
