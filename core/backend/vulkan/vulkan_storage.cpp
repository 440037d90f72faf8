#include "vulkan_storage.h"

#include "context.h"
#include "io/dtype_widening.h"
#include "vk_error.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace headlight::vk {
namespace {
constexpr uint32_t kGuardBits = 0x7fa5a5a5; // a NaN no kernel computes
} // namespace

VulkanStorage::VulkanStorage(std::shared_ptr<Context> context, const std::vector<int64_t>& shape,
                             std::size_t maxBindingBytes, int64_t guardRows, StoredDType dtype)
    : context_(std::move(context))
    , guardRows_(guardRows)
    , dtype_(dtype) {
    if (dtype_ != StoredDType::F32 && guardRows_ > 0)
        throw std::logic_error("16-bit storage holds no guard rows");
    const int64_t size = elementCount(shape);
    rowLength_ = shape.empty() ? 1 : shape.back();
    rows_ = rowLength_ == 0 ? 0 : size / rowLength_;
    if (size == 0) return; // nothing to hold: no buffer (Vulkan buffers cannot be empty)
    const auto rowBytes = std::size_t(rowLength_) * elementBytes();
    const int64_t rowsPerBinding = int64_t(maxBindingBytes / rowBytes);
    if (rowsPerBinding < 1 + 2 * guardRows_)
        throw VulkanError("a row of " + std::to_string(rowBytes) + " bytes (shape " +
                          shapeString(shape) + ") exceeds the " + std::to_string(maxBindingBytes) +
                          "-byte storage binding limit");
    rowsPerChunk_ = rowsPerBinding - 2 * guardRows_;
    for (int64_t first = 0; first < rows_; first += rowsPerChunk_) {
        const int64_t rows = std::min(rowsPerChunk_, rows_ - first) + 2 * guardRows_;
        // Whole uints: the 16-bit readers load two elements at a time.
        chunks_.emplace_back(*context_, (std::size_t(rows) * rowBytes + 3) / 4 * 4);
        if (guardRows_ > 0)
            chunks_.back().upload(std::span<const uint32_t>(
                std::vector<uint32_t>(std::size_t(rows * rowLength_), kGuardBits)));
    }
}

bool VulkanStorage::guardsIntact() const {
    for (std::size_t i = 0; i < chunks_.size(); ++i) {
        std::vector<uint32_t> words(chunks_[i].bytes() / sizeof(uint32_t));
        chunks_[i].download(std::span<uint32_t>(words));
        const auto guard = std::size_t(guardRows_ * rowLength_);
        for (std::size_t w = 0; w < words.size(); ++w)
            if ((w < guard || w >= words.size() - guard) && words[w] != kGuardBits) return false;
    }
    return true;
}

int64_t VulkanStorage::chunkRows(std::size_t index) const {
    return std::min(rowsPerChunk_, rows_ - chunkFirstRow(index));
}

VulkanStorage::Location VulkanStorage::locate(int64_t row) const {
    const auto index = std::size_t(row / rowsPerChunk_);
    return {&chunks_.at(index), uint32_t(row % rowsPerChunk_ + guardRows_)};
}

VulkanStorage::Location VulkanStorage::chunkStart(std::size_t index) const {
    return {&chunks_.at(index), uint32_t(guardRows_)};
}

std::size_t VulkanStorage::deviceBytes() const {
    std::size_t bytes = 0;
    for (const Buffer& chunk : chunks_)
        bytes += chunk.bytes();
    return bytes;
}

void VulkanStorage::writeStored(std::span<const std::byte> bits) {
    const std::size_t rowBytes = std::size_t(rowLength_) * elementBytes();
    for (std::size_t i = 0; i < chunks_.size(); ++i)
        chunks_[i].upload(bits.subspan(std::size_t(chunkFirstRow(i)) * rowBytes,
                                       std::size_t(chunkRows(i)) * rowBytes));
}

void VulkanStorage::write(std::span<const float> values) {
    for (std::size_t i = 0; i < chunks_.size(); ++i) {
        const auto first = std::size_t(chunkFirstRow(i) * rowLength_);
        chunks_[i].upload(values.subspan(first, std::size_t(chunkRows(i) * rowLength_)),
                          std::size_t(guardRows_ * rowLength_) * sizeof(float));
    }
}

void VulkanStorage::read(std::span<float> values) const {
    if (dtype_ != StoredDType::F32) {
        const io::DType stored = dtype_ == StoredDType::F16 ? io::DType::F16 : io::DType::BF16;
        for (std::size_t i = 0; i < chunks_.size(); ++i) {
            std::vector<std::byte> bits(std::size_t(chunkRows(i) * rowLength_) * elementBytes());
            chunks_[i].download(std::span<std::byte>(bits));
            io::widenToF32(stored, bits, values.data() + chunkFirstRow(i) * rowLength_);
        }
        return;
    }
    for (std::size_t i = 0; i < chunks_.size(); ++i) {
        const auto first = std::size_t(chunkFirstRow(i) * rowLength_);
        chunks_[i].download(values.subspan(first, std::size_t(chunkRows(i) * rowLength_)),
                            std::size_t(guardRows_ * rowLength_) * sizeof(float));
    }
}

VulkanStorage& storageOf(const DeviceTensor& tensor) {
    auto* storage = dynamic_cast<VulkanStorage*>(tensor.storage());
    if (!storage)
        throw std::logic_error("a tensor of another backend was given to the Vulkan backend");
    return *storage;
}

std::vector<RowSegment> rowSegments(int64_t count, std::span<const RowOperand> operands,
                                    int64_t maxRows) {
    std::vector<RowSegment> segments;
    for (int64_t begin = 0; begin < count;) {
        int64_t end = std::min(count, begin + maxRows);
        for (const RowOperand& operand : operands) {
            const int64_t row = operand.firstRow + begin,
                          perChunk = operand.storage->rowsPerChunk();
            end = std::min(end, (row / perChunk + 1) * perChunk - operand.firstRow);
        }
        segments.push_back({begin, end});
        begin = end;
    }
    return segments;
}
} // namespace headlight::vk
