#include "backend/backend_kind.h"

namespace headlight {

const char* backendName(BackendKind kind) {
    return kind == BackendKind::Vulkan ? "vulkan" : "cpu";
}

std::optional<BackendKind> parseBackend(const std::string& name) {
    if (name == "cpu") return BackendKind::Cpu;
    if (name == "vulkan") return BackendKind::Vulkan;
    return std::nullopt;
}
} // namespace headlight
