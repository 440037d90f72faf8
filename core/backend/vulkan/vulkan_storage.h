#pragma once
// [SECTION] VulkanStorage: a tensor's values on the device, split by rows over as many storage
// buffers as the per-binding limit needs (128 MiB on lavapipe, so a [151936, 896] embedding or
// [32, 4096, 4096] attention probabilities take several). A row is the tensor's last dimension;
// every chunk but the last holds rowsPerChunk() rows, so any row is found by division.
//
// [SECTION] Row segments: an op that walks rows (norms, activations, linear's M, attention's
// head·query rows) covers them in segments within which every operand stays in one chunk.
// Chunk boundaries are the only reason for more than one dispatch per op.
//
// [SECTION] Guards (tests): with guardRows > 0 every buffer also holds that many rows before and
// after its own, filled with a sentinel bit pattern; kernels address every operand through row
// offsets (locate), so an out-of-bounds write by a kernel shows as a changed guard.
//
// [SECTION] Stored 16-bit weights: a weight uploaded by VulkanBackend::uploadStored on a device
// with storageBuffer16BitAccess keeps its F16 or BF16 bits (half the memory of f32); only
// linear's w and gatherRows' table read it (shaders/stored_weight.glsl). Offsets still count
// elements; such storage has no guard rows (kernels never write it).

#include "backend/backend.h"
#include "backend/vulkan/buffer.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

namespace headlight::vk {

class Context;

// The element format of a VulkanStorage, numbered as shaders/stored_weight.glsl's DTYPE_*.
enum class StoredDType : uint32_t { F32 = 0, F16 = 1, BF16 = 2 };

class VulkanStorage final : public DeviceStorage,
                            public std::enable_shared_from_this<VulkanStorage> {
public:
    // Throws VulkanError when one row (plus guards) alone exceeds `maxBindingBytes`, or memory runs
    // out.
    VulkanStorage(std::shared_ptr<Context> context, const std::vector<int64_t>& shape,
                  std::size_t maxBindingBytes, int64_t guardRows = 0,
                  StoredDType dtype = StoredDType::F32);

    int64_t rows() const { return rows_; }
    int64_t rowLength() const { return rowLength_; }
    StoredDType dtype() const { return dtype_; }
    std::size_t deviceBytes() const; // all buffers together
    int64_t rowsPerChunk() const { return rowsPerChunk_; }
    std::size_t chunkCount() const { return chunks_.size(); }
    bool singleChunk() const { return chunks_.size() <= 1; }
    int64_t chunkFirstRow(std::size_t index) const { return int64_t(index) * rowsPerChunk_; }
    int64_t chunkRows(std::size_t index) const;

    struct Location {
        const Buffer* buffer;
        uint32_t row; // row within that buffer
    };
    Location locate(int64_t row) const;           // where tensor row `row` lives
    Location chunkStart(std::size_t index) const; // where chunk `index`'s first row lives
    bool guardsIntact() const;                    // true when there are no guards

    void write(std::span<const float> values);         // F32 storage
    void writeStored(std::span<const std::byte> bits); // 16-bit storage: the stored elements
    void read(std::span<float> values) const;          // widened to f32 whatever the dtype

private:
    std::shared_ptr<Context> context_; // outlives the buffers
    int64_t rows_ = 0;
    int64_t rowLength_ = 0;
    int64_t rowsPerChunk_ = 1;
    int64_t guardRows_ = 0;
    StoredDType dtype_ = StoredDType::F32;
    std::vector<Buffer> chunks_;

    std::size_t elementBytes() const { return dtype_ == StoredDType::F32 ? 4 : 2; }
};

// The Vulkan storage behind a DeviceTensor; throws std::logic_error for another backend's.
VulkanStorage& storageOf(const DeviceTensor& tensor);

// An operand of a row-walking op: virtual row r is row firstRow + r of `storage`.
struct RowOperand {
    const VulkanStorage* storage;
    int64_t firstRow = 0;
};

struct RowSegment {
    int64_t begin, end; // virtual rows [begin, end)
    int64_t rows() const { return end - begin; }
};

// Splits virtual rows [0, count) where any operand crosses a chunk boundary, and into pieces of
// at most maxRows (the 65535 workgroups per dimension every device supports).
std::vector<RowSegment> rowSegments(int64_t count, std::span<const RowOperand> operands,
                                    int64_t maxRows = 65535);
inline std::vector<RowSegment>
rowSegments(int64_t count, std::initializer_list<RowOperand> operands, int64_t maxRows = 65535) {
    return rowSegments(count, std::span<const RowOperand>(operands.begin(), operands.size()),
                       maxRows);
}
} // namespace headlight::vk
