#pragma once
// [SECTION] RowView: a tensor as an op walks it, rows of `cols` values, which may differ from the
// row length its storage was allocated with: DeviceTensor::reshaped() shares storage, and a
// VulkanStorage is split into buffers by its own rows. A view of one-buffer storage may have any
// shape; a view of split storage needs whole view rows in every buffer (its rows must divide the
// buffers' element counts, e.g. [H, T, T] seen as [H·T, T], [H, T·T] or flat), and raises
// VulkanError otherwise, so that the caller falls back to the CPU.
// Views address elements, not rows: kernels get element offsets into their buffers.

#include "backend/vulkan/vulkan_storage.h"

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace headlight::vk {

class RowView {
public:
    // `op` names the caller in the error message. `cols` must be positive.
    RowView(const VulkanStorage& storage, int64_t cols, const char* op);

    int64_t cols() const { return cols_; }
    int64_t rows() const { return rows_; }
    int64_t rowsPerBuffer() const { return rowsPerBuffer_; }
    bool singleBuffer() const { return storage_->singleChunk(); }
    // The buffer holding view row `row` and the element offset of its first value there.
    struct At {
        const Buffer* buffer;
        uint32_t element;
    };
    At at(int64_t row) const;
    // Whether view rows [first, first + count) lie in one buffer.
    bool oneBuffer(int64_t first, int64_t count) const;

private:
    const VulkanStorage* storage_;
    int64_t cols_, rows_, rowsPerBuffer_;
};

// An operand of a view-walking op: virtual row r is view row firstRow + r.
struct ViewOperand {
    const RowView* view;
    int64_t firstRow = 0;
};

// Splits virtual rows [0, count) where any operand crosses from one buffer into the next, and into
// pieces of at most maxRows (workgroup counts are capped at 65535 per dimension).
std::vector<RowSegment> viewSegments(int64_t count, std::initializer_list<ViewOperand> operands,
                                     int64_t maxRows = 65535);
} // namespace headlight::vk
