#pragma once
// [SECTION] Backend: the op vocabulary every model is written against
//
// The model code (core/model) calls only these ops, so the same code runs on the CPU backend
// (Eigen, the readable reference) and the Vulkan backend (compute shaders). Each op states its
// shapes; tensors are row-major f32. `out` may alias an input only where the op says so.
// A backend may record work and run it later (Vulkan records one command buffer per forward
// pass): download() and finish() run whatever is pending.
//
// Index: DeviceTensor · AttentionParams · RotaryParams · BinaryOp · MapOp · Backend (memory, linear
// algebra, norms, activations, positions, attention, tensor algebra for variants) · makeBackend

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/backend_choice.h"
#include "io/stored_matrix.h"
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
    // The same storage seen with another shape of the same element count (no copy).
    DeviceTensor reshaped(std::vector<int64_t> shape) const {
        if (elementCount(shape) != size()) throw std::invalid_argument("reshape to a different element count");
        return DeviceTensor(std::move(shape), storage_);
    }

private:
    std::vector<int64_t> shape_;
    std::shared_ptr<DeviceStorage> storage_;
};

// Scaled dot-product attention over T tokens, grouped-query aware.
// A key j is masked for query i when keyValid[j] == 0, or (causal) j > i, or (slidingWindow > 0)
// i - j >= slidingWindow. With softcap > 0 each scaled score s first becomes softcap·tanh(s /
// softcap) (Gemma 2's attn_logit_softcapping). Masked scores are replaced by the lowest f32
// before the softmax, as Hugging Face does, so a row whose keys are all masked becomes uniform
// rather than NaN.
struct AttentionParams {
    int heads = 0;
    int kvHeads = 0; // query head h reads key/value head h / (heads / kvHeads)
    int headDim = 0;
    float scale = 1.0f; // multiplies q·k (usually 1/sqrt(headDim))
    bool causal = false;
    int slidingWindow = 0;         // 0: no window
    float softcap = 0.0f;          // 0: scores are not capped
    std::vector<uint8_t> keyValid; // [T]; empty means all valid
};

// Which features of each head Backend::rope turns, and how it pairs them.
struct RotaryParams {
    int heads = 0;
    int headDim = 0;
    int rotaryDim = 0;        // even, at most headDim: features [0, rotaryDim) of each head turn
    bool interleaved = false; // pairs (2i, 2i + 1) rather than (i, i + rotaryDim/2)
    double theta = 10000.0;
};

// Elementwise binary ops of Backend::binary.
enum class BinaryOp { Add, Sub, Mul, Div };

// Elementwise maps of Backend::map, applied to y = alpha·x + beta:
//   Affine y · Exp e^y · Elu1 elu(y) + 1 (Katharopoulos et al. 2020) · Relu max(y, 0) ·
//   Sigmoid 1/(1 + e^-y) · Cos cos y · Sin sin y · Square y² · Sqrt √y · Log ln y · Tanh tanh y
enum class MapOp { Affine, Exp, Elu1, Relu, Sigmoid, Cos, Sin, Square, Sqrt, Log, Tanh };

// A sparse attention pattern as rows of key indices (CSR), for Backend::sparseAttention: query
// i of head h attends keys[rowStart[r]] .. keys[rowStart[r + 1] − 1] with r = (h mod heads)·T + i,
// ascending. `heads` is 1 (every head shares the pattern) or the model's head count.
struct SparsePattern {
    int heads = 1;
    int64_t tokens = 0;
    std::vector<int32_t> rowStart; // [heads·T + 1]
    std::vector<int32_t> keys;     // [E]
    int64_t entries() const { return int64_t(keys.size()); }
};

// Device memory a backend can still give Headlight (model/memory_budget.h compares estimates with it).
struct DeviceMemory {
    double available = 0.0; // bytes
    std::string source;     // what sets that figure, shown in messages
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual BackendKind kind() const = 0;
    virtual std::string deviceName() const = 0;
    // The free device memory, for backends with memory of their own (none: host memory, which
    // model/memory_budget.h checks separately).
    virtual std::optional<DeviceMemory> deviceMemory() const { return std::nullopt; }
    // Whether 16-bit weights stay 16-bit on the device (model/memory_budget.h plans with it).
    virtual bool keepsWeights16Bit() const { return false; }

    // [SECTION] memory
    virtual DeviceTensor upload(const Tensor& host) = 0;
    virtual DeviceTensor allocate(std::vector<int64_t> shape) = 0; // contents undefined
    // A weight left in its mapped file (io/stored_matrix.h), for linear's w and gatherRows'
    // table only. A backend that reads the stored dtype keeps it so; by default it is widened.
    virtual DeviceTensor uploadStored(const io::StoredMatrix& matrix) {
        Tensor widened(matrix.shape());
        io::widenRows(matrix, 0, matrix.rows, widened.data());
        return upload(widened);
    }
    virtual Tensor download(const DeviceTensor& tensor) = 0;       // runs pending work first
    virtual void finish() = 0;                                    // runs pending work

    // [SECTION] linear algebra
    // out[M,N] = x[M,K] · w[N,K]ᵀ (+ bias[N]); w in nn.Linear layout.
    virtual void linear(const DeviceTensor& x, const DeviceTensor& w, const DeviceTensor* bias,
                        DeviceTensor& out) = 0;
    // out[M,N] = a[M,N] + b[R,N] with b's rows repeating (R divides M); out may alias a.
    void add(const DeviceTensor& a, const DeviceTensor& b, DeviceTensor& out) { binary(a, b, BinaryOp::Add, out); }
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
    // Rotary embedding on x[T, heads·headDim], in place, on the first rotaryDim features of each
    // head (the rest pass through): pair i < rotaryDim/2 turns by angle positions[t] ·
    // theta^(-2i/rotaryDim). Rotate-half pairs features (i, i + rotaryDim/2) (Llama, GPT-NeoX);
    // interleaved pairs (2i, 2i + 1) (GPT-J's rotate_every_two).
    virtual void rope(DeviceTensor& x, const RotaryParams& params,
                      std::span<const int32_t> positions) = 0;
    // Full-width rotate-half rotary embedding (rotaryDim = headDim).
    void rope(DeviceTensor& x, int heads, int headDim, std::span<const int32_t> positions,
              double theta) {
        rope(x, RotaryParams{heads, headDim, headDim, false, theta}, positions);
    }

    // [SECTION] attention
    // q[T, heads·headDim], k and v [T, kvHeads·headDim] → context[T, heads·headDim].
    // When given, scores [heads,T,T] receives the scaled, masked pre-softmax scores and probs
    // [heads,T,T] the softmax probabilities actually used.
    virtual void attention(const DeviceTensor& q, const DeviceTensor& k, const DeviceTensor& v,
                           const AttentionParams& params, DeviceTensor& context, DeviceTensor* scores,
                           DeviceTensor* probs) = 0;

    // [SECTION] tensor algebra for variants
    // The variants (core/variants) are composed from these, so each is written once and runs on
    // every backend. Shapes [B, M, N] are row-major; a 2-D tensor [M, N] counts as B = 1.

    // out = a ∘ b elementwise. b is [R, N] with R dividing a's rows M (b's rows repeat, period R)
    // or b is [M, 1] (one value per row of a, broadcast along the row). out may alias a.
    virtual void binary(const DeviceTensor& a, const DeviceTensor& b, BinaryOp op, DeviceTensor& out) = 0;
    // out = f(alpha·x + beta) elementwise; out may alias x.
    virtual void map(const DeviceTensor& x, MapOp op, float alpha, float beta, DeviceTensor& out) = 0;
    // out[R, 1] = Σ_n x[r, n] (sum = true) or max_n x[r, n], over the last dimension.
    virtual void reduceRows(const DeviceTensor& x, bool sum, DeviceTensor& out) = 0;
    // Row softmax over the last dimension N of x [R, N] (max-subtracted); out may alias x.
    // mask [Rm, N] (optional) with Rm dividing R repeats like binary's b; where it is 0 the score
    // becomes the lowest f32 before the softmax (Hugging Face semantics: a fully masked row is
    // uniform, never NaN).
    virtual void softmax(const DeviceTensor& x, const DeviceTensor* mask, DeviceTensor& out) = 0;
    // softmax with one more logit `sink` in every row that takes its share and is then dropped
    // (the attention-sink softmax): out[r, n] = e^{s_rn} / (e^{sink} + Σ_k e^{s_rk}), computed
    // with M = max(max_k s_rk, sink) subtracted. Rows sum to less than 1. mask as softmax's; a
    // fully masked row gives all its mass to the sink and becomes 0. out may alias x.
    virtual void sinkSoftmax(const DeviceTensor& x, const DeviceTensor* mask, float sink,
                             DeviceTensor& out) = 0;
    // Batched matmul out[B, M, N] = alpha · a[B, M, K] · b, b = [Bb, K, N] or, when transposeB,
    // [Bb, N, K] used as its transpose. Bb divides B: batch i of a pairs with batch i / (B / Bb)
    // of b, so Bb = 1 broadcasts b and Bb = kvHeads groups query heads as grouped-query attention.
    virtual void matmul(const DeviceTensor& a, const DeviceTensor& b, bool transposeB, float alpha,
                        DeviceTensor& out) = 0;
    // x[T, H·d] → out[H, T, d] (splitHeads) and back (mergeHeads: x[H, T, d] → out[T, H·d]).
    virtual void splitHeads(const DeviceTensor& x, int heads, DeviceTensor& out) = 0;
    virtual void mergeHeads(const DeviceTensor& x, DeviceTensor& out) = 0;
    // Copies `rows` rows of src[.., N] from row srcRow into dst[.., N] from row dstRow (same N).
    virtual void copyRows(const DeviceTensor& src, int64_t srcRow, int64_t rows, DeviceTensor& dst,
                          int64_t dstRow) = 0;
    // out[ids[i]] += weights[i] · src[i] for each row i of src[n, N] (rows of out may repeat).
    virtual void scatterAddRows(const DeviceTensor& src, std::span<const int32_t> ids, std::span<const float> weights,
                                DeviceTensor& out) = 0;
    // Causal linearized attention in its prefix-sum (RNN) form (Katharopoulos et al. 2020):
    // phiQ, phiK [B, T, m], v [B, T, d] → out[B, T, d] with
    //   out_t = (φq_t · Σ_{s≤t} φk_s v_sᵀ) / (φq_t · Σ_{s≤t} φk_s + eps),
    // no T × T matrix is formed.
    virtual void causalLinearAttention(const DeviceTensor& phiQ, const DeviceTensor& phiK, const DeviceTensor& v,
                                       float eps, DeviceTensor& out) = 0;
    // Softmax attention over a sparse pattern with no T × T matrix (the sparse masks at long T):
    // q [H, T, d], k and v [Hkv, T, d] (head h reads k/v head h / (H / Hkv)) → context [H, T, d].
    // Query i of head h scores its pattern's keys j with scale·q_i·k_j − slope_h·|i − j| (ALiBi,
    // when `alibiSlopes` [H] is given), takes the softmax over them and sums their values. A
    // row with no key attends every key uniformly (Hugging Face's fully masked row). When given,
    // weights [H / pattern.heads, E] receives each entry's probability: head h's at row h / Hp.
    virtual void sparseAttention(const DeviceTensor& q, const DeviceTensor& k,
                                 const DeviceTensor& v, const SparsePattern& pattern, float scale,
                                 std::span<const float> alibiSlopes, DeviceTensor& context,
                                 DeviceTensor* weights) = 0;
};

// Throws std::invalid_argument unless the operands of sparseAttention fit together: q [H, T, d],
// k and v [Hkv, T, d] with Hkv dividing H, the pattern's heads 1 or H, rowStart [Hp·T + 1]
// ascending from 0 to E, keys in [0, T), context [H, T, d], weights [H / Hp, E], slopes [H] or
// none.
void checkSparseAttention(const DeviceTensor& q, const DeviceTensor& k, const DeviceTensor& v,
                          const SparsePattern& pattern, std::span<const float> alibiSlopes,
                          const DeviceTensor& context, const DeviceTensor* weights);

std::unique_ptr<Backend> makeCpuBackend();
std::unique_ptr<Backend> makeVulkanBackend(std::shared_ptr<vk::Context> context);
} // namespace headlight
