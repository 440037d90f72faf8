#include "row_view.h"

#include "vk_error.h"

#include <algorithm>
#include <limits>
#include <string>

namespace headlight::vk {
namespace {
// Rows per buffer of one-buffer storage: larger than any view, small enough not to overflow.
constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max() / 4;
} // namespace

RowView::RowView(const VulkanStorage& storage, int64_t cols, const char* op)
    : storage_(&storage)
    , cols_(cols)
    , rows_(storage.rows() * storage.rowLength() / cols)
    , rowsPerBuffer_(kUnbounded) {
    if (storage.singleChunk()) return;
    const int64_t elementsPerBuffer = storage.rowsPerChunk() * storage.rowLength();
    if (elementsPerBuffer % cols != 0)
        throw VulkanError(std::string(op) + ": a view with rows of " + std::to_string(cols) +
                          " values does not fit a tensor of " +
                          std::to_string(storage.rowLength()) +
                          "-value rows split over several storage buffers");
    rowsPerBuffer_ = elementsPerBuffer / cols;
}

RowView::At RowView::at(int64_t row) const {
    const auto chunk = std::size_t(row / rowsPerBuffer_);
    const VulkanStorage::Location start = storage_->chunkStart(chunk);
    return {start.buffer,
            uint32_t(int64_t(start.row) * storage_->rowLength() + row % rowsPerBuffer_ * cols_)};
}

bool RowView::oneBuffer(int64_t first, int64_t count) const {
    return count <= 0 || first / rowsPerBuffer_ == (first + count - 1) / rowsPerBuffer_;
}

std::vector<RowSegment> viewSegments(int64_t count, std::initializer_list<ViewOperand> operands,
                                     int64_t maxRows) {
    std::vector<RowSegment> segments;
    for (int64_t begin = 0; begin < count;) {
        int64_t end = std::min(count, begin + maxRows);
        for (const ViewOperand& operand : operands) {
            const int64_t row = operand.firstRow + begin, perBuffer = operand.view->rowsPerBuffer();
            end = std::min(end, (row / perBuffer + 1) * perBuffer - operand.firstRow);
        }
        segments.push_back({begin, end});
        begin = end;
    }
    return segments;
}
} // namespace headlight::vk
