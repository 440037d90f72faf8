#pragma once
// The two backends by name. Apart from backend_choice.h so that files naming a backend (a
// scenario's "backend") need neither the Vulkan context nor the device list.

#include <optional>
#include <string>

namespace headlight {

enum class BackendKind { Cpu, Vulkan };
const char* backendName(BackendKind kind);
std::optional<BackendKind> parseBackend(const std::string& name); // "cpu" | "vulkan"
} // namespace headlight
