#pragma once
// The Vulkan backend: every Backend op as one compute shader (shaders/*.comp), recorded into one
// command buffer and run on download() or finish().
//
// Implements: every op of backend.h, with tensors larger than one storage binding split by rows
// (VulkanStorage) wherever they occur in practice: big linear weights and tied embeddings,
// embedding tables, activations of long inputs, attention scores and probabilities. The
// tensor-algebra ops take reshaped views (row_view.h).
// Lacks (VulkanError; the caller falls back to the CPU backend): attention whose q, k, v or
// context alone exceed one binding; the split-storage cases listed in docs/vulkan-backend.md
// (a repeating operand, an untransposed matmul batch of b or a causal-linear-attention batch
// across buffers; views whose rows straddle buffers); norms, gather, rope and attention on views
// whose rows differ from their storage's. F16 / BF16 weights (uploadStored) stay in 16 bits on a
// device with storageBuffer16BitAccess, read by linear and gatherRows; elsewhere they are widened
// to f32 on load.
//
// Index: VulkanBackendOptions · VulkanBackend (memory, ops, internals) · makeVulkanBackend

#include "backend/backend.h"
#include "backend/vulkan/kernel_config.h"
#include "backend/vulkan/recorder.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace headlight::vk {

class Buffer;
class ComputePipeline;
class Context;
class RowView;
class VulkanStorage;
struct MatmulDispatch;

struct VulkanBackendOptions {
    // Largest storage buffer per tensor chunk; 0 means the device's limit. Tests lower it to
    // exercise chunking with small tensors.
    std::size_t maxBindingBytes = 0;
    // Rows of sentinel values around every buffer's contents (VulkanStorage::guardsIntact), so
    // that tests catch a kernel writing out of bounds; 0 outside tests.
    int64_t guardRows = 0;
    // Widen F16 / BF16 weights to f32 on upload even where the device could keep them in 16 bits
    // (tests compare the two paths).
    bool widenStoredWeights = false;
};

class VulkanBackend final : public Backend {
public:
    // Throws VulkanError when the device lacks what the kernels need (subgroup arithmetic and
    // shuffle in compute shaders).
    VulkanBackend(std::shared_ptr<Context> context, const VulkanBackendOptions& options = {});
    ~VulkanBackend() override;

    BackendKind kind() const override { return BackendKind::Vulkan; }
    std::string deviceName() const override;
    std::optional<DeviceMemory> deviceMemory() const override;

    // [SECTION] memory
    DeviceTensor upload(const Tensor& host) override;
    DeviceTensor allocate(std::vector<int64_t> shape) override;
    DeviceTensor uploadStored(const io::StoredMatrix& matrix) override;
    Tensor download(const DeviceTensor& tensor) override;
    void finish() override;

    // [SECTION] ops (shapes and semantics: backend.h)
    void linear(const DeviceTensor& x, const DeviceTensor& w, const DeviceTensor* bias,
                DeviceTensor& out) override;
    void binary(const DeviceTensor& a, const DeviceTensor& b, BinaryOp op,
                DeviceTensor& out) override;
    void gatherRows(const DeviceTensor& table, std::span<const int32_t> ids,
                    DeviceTensor& out) override;
    void layerNorm(const DeviceTensor& x, const DeviceTensor& gamma, const DeviceTensor& beta,
                   float eps, DeviceTensor& out) override;
    void rmsNorm(const DeviceTensor& x, const DeviceTensor& gamma, float eps,
                 DeviceTensor& out) override;
    void activation(const DeviceTensor& x, Activation kind, DeviceTensor& out) override;
    void gatedActivation(const DeviceTensor& gate, const DeviceTensor& up, Activation kind,
                         DeviceTensor& out) override;
    using Backend::rope;
    void rope(DeviceTensor& x, const RotaryParams& params,
              std::span<const int32_t> positions) override;
    void attention(const DeviceTensor& q, const DeviceTensor& k, const DeviceTensor& v,
                   const AttentionParams& params, DeviceTensor& context, DeviceTensor* scores,
                   DeviceTensor* probs) override;
    void map(const DeviceTensor& x, MapOp op, float alpha, float beta, DeviceTensor& out) override;
    void reduceRows(const DeviceTensor& x, bool sum, DeviceTensor& out) override;
    void softmax(const DeviceTensor& x, const DeviceTensor* mask, DeviceTensor& out) override;
    void sinkSoftmax(const DeviceTensor& x, const DeviceTensor* mask, float sink,
                     DeviceTensor& out) override;
    void matmul(const DeviceTensor& a, const DeviceTensor& b, bool transposeB, float alpha,
                DeviceTensor& out) override;
    void splitHeads(const DeviceTensor& x, int heads, DeviceTensor& out) override;
    void mergeHeads(const DeviceTensor& x, DeviceTensor& out) override;
    void copyRows(const DeviceTensor& src, int64_t srcRow, int64_t rows, DeviceTensor& dst,
                  int64_t dstRow) override;
    void scatterAddRows(const DeviceTensor& src, std::span<const int32_t> ids,
                        std::span<const float> weights, DeviceTensor& out) override;
    void causalLinearAttention(const DeviceTensor& phiQ, const DeviceTensor& phiK,
                               const DeviceTensor& v, float eps, DeviceTensor& out) override;
    void sparseAttention(const DeviceTensor& q, const DeviceTensor& k, const DeviceTensor& v,
                         const SparsePattern& pattern, float scale,
                         std::span<const float> alibiSlopes, DeviceTensor& context,
                         DeviceTensor* weights) override;

    std::size_t maxBindingBytes() const { return maxBindingBytes_; }
    // Whether uploadStored keeps F16 / BF16 weights in 16 bits on this device.
    bool keepsWeights16Bit() const override { return weights16Bit_; }
    // Device bytes taken by the weights uploadStored has made so far (tests compare the paths).
    std::size_t storedWeightBytes() const { return storedWeightBytes_; }

private:
    // [SECTION] internals
    const ComputePipeline& pipeline(const std::string& shader,
                                    std::vector<uint32_t> specialization);
    // The storage of `tensor`, kept alive until the pending commands have run; f32 only (a 16-bit
    // weight reaching another op than linear or gatherRows is a logic error).
    const VulkanStorage& use(const DeviceTensor& tensor);
    // The same for linear's w and gatherRows' table, which may hold 16-bit weights.
    const VulkanStorage& useWeight(const DeviceTensor& tensor);
    // A small buffer holding `words` for the pending commands (ids, masks, tables).
    const Buffer& transient(std::span<const std::byte> bytes);
    // [T, rotaryDim/2] of (cos, sin), cached for the positions, width and theta last asked for.
    const Buffer& ropeTable(std::span<const int32_t> positions, int rotaryDim, double theta);
    void dispatchMatmul(const MatmulDispatch& dispatch); // one dispatch of matmul.comp
    // splitHeads (toSplit) and mergeHeads between tokens [T, H·d] and split [H, T, d].
    void dispatchHeads(const RowView& tokens, const RowView& split, int64_t heads, bool toSplit);
    void dispatchSoftmax(const DeviceTensor& x, const DeviceTensor* mask, std::optional<float> sink,
                         DeviceTensor& out);

    std::shared_ptr<Context> context_;
    std::size_t maxBindingBytes_;
    int64_t guardRows_;
    bool weights16Bit_;
    std::size_t storedWeightBytes_ = 0;
    KernelConfig config_;
    Recorder recorder_;
    std::map<std::string, std::unique_ptr<ComputePipeline>> pipelines_;
    std::shared_ptr<Buffer> placeholder_; // bound where an optional input or output is absent
    struct RopeTable {
        std::vector<int32_t> positions;
        int rotaryDim = 0;
        double theta = 0.0;
        std::shared_ptr<Buffer> buffer;
    } rope_; // models rotate q and k of every layer with the same positions
};

std::unique_ptr<Backend> makeVulkanBackend(std::shared_ptr<Context> context,
                                           const VulkanBackendOptions& options);
} // namespace headlight::vk
