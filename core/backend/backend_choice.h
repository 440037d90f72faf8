#pragma once
// Which backend runs the forward pass, and why. Vulkan by default on a real GPU; when the only
// Vulkan device is a CPU device (lavapipe), Eigen on the same cores is much faster, so the CPU
// backend is the default and the reason says so. A forced choice (--backend, the Compute menu)
// wins when it can be honoured.

#include <optional>
#include <string>
#include <vector>

#include "backend/backend_kind.h"
#include "backend/vulkan/context.h"

namespace headlight {

struct BackendChoice {
    BackendKind kind = BackendKind::Cpu;
    std::optional<vk::DeviceInfo> device; // the Vulkan device the choice was made about
    std::string reason;                   // one line for the status bar or the CLI
};

// Pure policy: `devices` as listDevices() returned them, or empty with `vulkanError` saying why.
BackendChoice decideBackend(std::optional<BackendKind> forced, const std::vector<vk::DeviceInfo>& devices,
                            const std::string& vulkanError, const std::string& deviceSelector = {});

// Lists the devices and applies decideBackend.
BackendChoice chooseBackend(std::optional<BackendKind> forced, const std::string& deviceSelector = {});
} // namespace headlight
