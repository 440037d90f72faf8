#include "backend_factory.h"

#include "backend/vulkan/context.h"
#include "backend/vulkan/vk_error.h"

namespace headlight {

OpenedBackend openBackend(const BackendChoice& choice, const std::string& deviceSelector) {
    if (choice.kind == BackendKind::Cpu) return {makeCpuBackend(), {}};
    try {
        vk::ContextOptions options;
        options.deviceSelector = deviceSelector;
        return {makeVulkanBackend(vk::Context::create(options)), {}};
    } catch (const vk::VulkanError& error) {
        return {makeCpuBackend(), std::string("Vulkan backend unavailable (") + error.what() + "); using the CPU backend"};
    }
}

bool gpuWorkAbandoned() { return vk::anyContextHung(); }
} // namespace headlight
