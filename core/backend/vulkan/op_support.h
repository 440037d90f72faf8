#pragma once
// Small helpers shared by the Vulkan backend's op files: argument checks with messages that
// name the op, and workgroup counts.

#include "backend/backend.h"

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
} // namespace headlight::vk
