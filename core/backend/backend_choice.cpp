#include "backend_choice.h"

#include <cstdlib>

#include "backend/vulkan/vk_error.h"

namespace headlight {

BackendChoice decideBackend(std::optional<BackendKind> forced, const std::vector<vk::DeviceInfo>& devices,
                            const std::string& vulkanError, const std::string& deviceSelector) {
    BackendChoice choice;
    if (const auto index = vk::selectDevice(devices, deviceSelector)) choice.device = devices[*index];
    if (!choice.device) {
        const std::string why = devices.empty() ? "no Vulkan device (" + vulkanError + ")"
                                                : "no Vulkan device matches '" + deviceSelector + "'";
        choice.reason = forced == BackendKind::Vulkan ? "Vulkan requested but " + why + "; using the CPU backend"
                                                      : "CPU backend: " + why;
        return choice;
    }
    if (forced) {
        choice.kind = *forced;
        choice.reason = std::string(backendName(*forced)) + " backend (chosen)";
        return choice;
    }
    if (choice.device->kind == vk::DeviceKind::Cpu) {
        choice.reason = "CPU backend: the only Vulkan device is a CPU (" + choice.device->name +
                        "), slower than Eigen on the same cores";
        return choice;
    }
    choice.kind = BackendKind::Vulkan;
    choice.reason = "Vulkan backend on " + choice.device->name;
    return choice;
}

BackendChoice chooseBackend(std::optional<BackendKind> forced, const std::string& deviceSelector) {
    std::string selector = deviceSelector;
    if (selector.empty())
        if (const char* env = std::getenv("HEADLIGHT_VULKAN_DEVICE")) selector = env;
    try {
        return decideBackend(forced, vk::listDevices(), {}, selector);
    } catch (const vk::VulkanError& error) {
        return decideBackend(forced, {}, error.what(), selector);
    }
}
} // namespace headlight
