// VulkanBackend: memory, pipelines and the small buffers ops need. The ops themselves are in
// vulkan_ops.cpp (elementwise, norms, rope, gather), vulkan_linear.cpp and vulkan_attention.cpp.
#include "vulkan_backend.h"

#include "backend/finite_guard.h"
#include "buffer.h"
#include "context.h"
#include "io/stored_matrix.h"
#include "model/memory_budget.h"
#include "pipeline.h"
#include "vk_error.h"
#include "vulkan_storage.h"

#include <algorithm>
#include <cmath>

namespace headlight::vk {

VulkanBackend::VulkanBackend(std::shared_ptr<Context> context, const VulkanBackendOptions& options)
    : context_(std::move(context))
    , guardRows_(options.guardRows)
    , weights16Bit_(context_->info().storageBuffer16Bit && !options.widenStoredWeights)
    , recorder_(*context_) {
    const DeviceInfo& info = context_->info();
    if (!info.subgroupArithmetic || !info.subgroupShuffle)
        throw VulkanError("device '" + info.name +
                          "' lacks subgroup arithmetic or shuffle in compute shaders");
    maxBindingBytes_ = std::size_t(info.maxStorageBufferRange);
    if (options.maxBindingBytes)
        maxBindingBytes_ = std::min(maxBindingBytes_, options.maxBindingBytes);
    config_ = kernelConfigFor(info);
    placeholder_ = std::make_shared<Buffer>(*context_, 16);
}

VulkanBackend::~VulkanBackend() = default;

std::string VulkanBackend::deviceName() const {
    return context_->info().name;
}

DeviceTensor VulkanBackend::upload(const Tensor& host) {
    auto storage =
        std::make_shared<VulkanStorage>(context_, host.shape(), maxBindingBytes_, guardRows_);
    storage->write(host.values());
    return DeviceTensor(host.shape(), storage);
}

DeviceTensor VulkanBackend::allocate(std::vector<int64_t> shape) {
    auto storage = std::make_shared<VulkanStorage>(context_, shape, maxBindingBytes_, guardRows_);
    return DeviceTensor(std::move(shape), storage);
}

DeviceTensor VulkanBackend::uploadStored(const io::StoredMatrix& matrix) {
    const bool is16Bit = matrix.dtype == io::DType::F16 || matrix.dtype == io::DType::BF16;
    if (!weights16Bit_ || !is16Bit) {
        DeviceTensor widened = Backend::uploadStored(matrix);
        storedWeightBytes_ += storageOf(widened).deviceBytes();
        return widened;
    }
    const StoredDType dtype = matrix.dtype == io::DType::F16 ? StoredDType::F16 : StoredDType::BF16;
    auto storage =
        std::make_shared<VulkanStorage>(context_, matrix.shape(), maxBindingBytes_, 0, dtype);
    storage->writeStored({matrix.bytes, std::size_t(matrix.storedBytes())});
    storedWeightBytes_ += storage->deviceBytes();
    return DeviceTensor(matrix.shape(), storage);
}

Tensor VulkanBackend::download(const DeviceTensor& tensor) {
    finish();
    Tensor host(tensor.shape());
    storageOf(tensor).read(host.values());
    return host;
}

void VulkanBackend::finish() {
    if (recorder_.pending()) recorder_.submit();
}

const ComputePipeline& VulkanBackend::pipeline(const std::string& shader,
                                               std::vector<uint32_t> specialization) {
    std::string key = shader;
    for (uint32_t value : specialization)
        key += "/" + std::to_string(value);
    auto& slot = pipelines_[key];
    if (!slot) slot = std::make_unique<ComputePipeline>(*context_, shader, specialization);
    return *slot;
}

const VulkanStorage& VulkanBackend::use(const DeviceTensor& tensor) {
    if (storageOf(tensor).dtype() != StoredDType::F32)
        throw std::logic_error(
            "a weight kept in 16 bits reached an op other than linear or gatherRows");
    return useWeight(tensor);
}

const VulkanStorage& VulkanBackend::useWeight(const DeviceTensor& tensor) {
    VulkanStorage& storage = storageOf(tensor);
    recorder_.keepAlive(storage.shared_from_this());
    return storage;
}

const Buffer& VulkanBackend::transient(std::span<const std::byte> bytes) {
    auto buffer = std::make_shared<Buffer>(*context_, std::max<std::size_t>(bytes.size(), 4));
    buffer->upload(bytes);
    recorder_.keepAlive(buffer);
    return *buffer;
}

// cos and sin of every (position, pair) angle, computed as Hugging Face (and the CPU backend)
// do: inverse frequencies and angles in f32, so that both backends rotate by the same angles.
const Buffer& VulkanBackend::ropeTable(std::span<const int32_t> positions, int rotaryDim,
                                       double theta) {
    const bool cached = rope_.buffer && rope_.rotaryDim == rotaryDim && rope_.theta == theta &&
                        std::equal(positions.begin(), positions.end(), rope_.positions.begin(),
                                   rope_.positions.end());
    if (!cached) {
        const int half = rotaryDim / 2;
        std::vector<float> table;
        table.reserve(positions.size() * std::size_t(half) * 2);
        for (const int32_t position : positions)
            for (int i = 0; i < half; ++i) {
                const auto inverseFrequency = float(1.0 / std::pow(theta, 2.0 * i / rotaryDim));
                const float angle = float(position) * inverseFrequency;
                table.push_back(float(std::cos(double(angle))));
                table.push_back(float(std::sin(double(angle))));
            }
        rope_ = {{positions.begin(), positions.end()},
                 rotaryDim,
                 theta,
                 std::make_shared<Buffer>(*context_, std::max<std::size_t>(table.size() * 4, 4))};
        rope_.buffer->upload(std::span<const float>(table));
    }
    recorder_.keepAlive(rope_.buffer);
    return *rope_.buffer;
}

std::unique_ptr<Backend> makeVulkanBackend(std::shared_ptr<Context> context,
                                           const VulkanBackendOptions& options) {
    return std::make_unique<VulkanBackend>(std::move(context), options);
}
std::optional<DeviceMemory> VulkanBackend::deviceMemory() const {
    const MemoryBudget budget = context_->memoryBudget();
    return DeviceMemory{double(budget.availableBytes), budget.source};
}
} // namespace headlight::vk

namespace headlight {
std::unique_ptr<Backend> makeVulkanBackend(std::shared_ptr<vk::Context> context) {
    return guardedWhenEnabled(vk::makeVulkanBackend(std::move(context), {}));
}

bool keepsWeights16Bit(const Backend& backend) { return backend.keepsWeights16Bit(); }
} // namespace headlight
