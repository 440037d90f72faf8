#pragma once
// Errors raised by the Vulkan compute layer. Callers catch VulkanError at the boundary (CLI, GUI)
// and fall back to the CPU backend; DeviceLost and OutOfDeviceMemory let them say why.

#include <stdexcept>
#include <string>

#include <vulkan/vulkan.h>

namespace headlight::vk {

class VulkanError : public std::runtime_error {
public:
    explicit VulkanError(const std::string& what, VkResult result = VK_ERROR_UNKNOWN)
        : std::runtime_error(what), result_(result) {}
    VkResult result() const { return result_; }

private:
    VkResult result_;
};

class DeviceLost : public VulkanError {
public:
    using VulkanError::VulkanError;
};

class OutOfDeviceMemory : public VulkanError {
public:
    using VulkanError::VulkanError;
};

const char* resultName(VkResult result);

// Throws the matching VulkanError subclass when `result` is not VK_SUCCESS; `what` names the call.
void check(VkResult result, const char* what);
} // namespace headlight::vk
