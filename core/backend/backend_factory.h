#pragma once
// Opens the backend a BackendChoice names. A Vulkan backend that cannot be created (no device,
// pipeline creation failure, out of memory) falls back to the CPU backend with the reason in
// `note`, never a crash; the caller shows the note (status bar, stderr).

#include <memory>
#include <string>

#include "backend/backend.h"
#include "backend/backend_choice.h"

namespace headlight {

struct OpenedBackend {
    std::unique_ptr<Backend> backend;
    std::string note; // empty, or why the CPU backend is used instead of Vulkan
};

OpenedBackend openBackend(const BackendChoice& choice, const std::string& deviceSelector = {});

// Whether a GPU batch was given up while it may still run (a hung or abandoned device,
// docs/vulkan-backend.md): the process must then end with std::_Exit, without the exit-time
// destructors of the driver's libraries, which its still-running threads use.
bool gpuWorkAbandoned();
} // namespace headlight
