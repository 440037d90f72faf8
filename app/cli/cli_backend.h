#pragma once
// The backend a command runs a model on, with the CPU as the fallback when Vulkan fails, for the
// commands that load a model themselves (inspect, heads), and the loaded checkpoint for those
// that run a LoadedModel (export, patch, steer).

#include "backend/backend_factory.h"
#include "cli_args.h"
#include "model/transformer.h"
#include "model_session.h"

#include <functional>
#include <memory>

namespace headlight::app {

// The backend --backend and --vulkan-device choose, opened: the CPU with the reason in `note`
// when Vulkan cannot be opened, or when --backend vulkan was asked for and refused.
OpenedBackend openChosenBackend(const CliArgs& args);

// Runs `work`, which loads `model` on opened.backend and uses it. When Vulkan fails inside it
// (pipeline creation, device lost, out of memory), `model` is released and `work` runs again on
// the CPU, with the reason in opened.note.
void runWithCpuFallback(OpenedBackend& opened, std::unique_ptr<TransformerModel>& model,
                        const std::function<void()>& work);
// The checkpoint --model names, on the backend --backend and --vulkan-device choose; a note about
// that choice goes to stderr as "headlight COMMAND: …".
std::unique_ptr<LoadedModel> loadChosenModel(const CliArgs& args, const char* command);
} // namespace headlight::app
