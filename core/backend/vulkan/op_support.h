#pragma once
// Small helpers shared by the Vulkan backend's op files: argument checks with messages that
// name the op, and workgroup counts.

#include "backend/backend.h"
#include "backend/vulkan/vk_error.h"
#include "backend/vulkan/vulkan_storage.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace headlight::vk {

// Workgroups to cover `items` with `perGroup` each, capped at the 65535 every device supports
// (kernels that can be capped walk the rest in a grid-stride loop).
inline uint32_t groupsFor(int64_t items, uint32_t perGroup) {
    return uint32_t(std::min<int64_t>((items + perGroup - 1) / perGroup, 65535));
}

[[noreturn]] inline void badShape(const char* op, const std::string& detail) {
    throw std::invalid_argument(std::string(op) + ": " + detail);
}

inline void requireShape(const char* op, const char* what, const DeviceTensor& tensor,
                         const std::vector<int64_t>& expected) {
    if (elementCount(tensor.shape()) != elementCount(expected) ||
        (tensor.shape().empty() ? 1 : tensor.shape().back()) !=
            (expected.empty() ? 1 : expected.back()))
        badShape(op, std::string(what) + " is " + shapeString(tensor.shape()) + ", expected " +
                         shapeString(expected));
}

inline int64_t lastDim(const DeviceTensor& tensor) {
    return tensor.shape().empty() ? 1 : tensor.shape().back();
}

// For ops that address tensors by their storage's rows (norms, gather, rope, attention): a
// reshaped view with rows of another length (DeviceTensor::reshaped) is refused rather than
// misread. The tensor-algebra ops take any view (row_view.h).
inline void requireStorageRows(const char* op, const DeviceTensor& tensor) {
    const int64_t own = storageOf(tensor).rowLength();
    if (tensor.size() > 0 && lastDim(tensor) != own)
        throw VulkanError(std::string(op) + ": a view with rows of " +
                          std::to_string(lastDim(tensor)) + " values over storage of " +
                          std::to_string(own) + "-value rows is not supported");
}
} // namespace headlight::vk
