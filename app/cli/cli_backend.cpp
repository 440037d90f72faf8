#include "cli_backend.h"

#include "backend/backend_choice.h"
#include "backend/vulkan/vk_error.h"

#include <cstdio>
#include <optional>
#include <string>

namespace headlight::app {

OpenedBackend openChosenBackend(const CliArgs& args) {
    std::optional<BackendKind> forced;
    if (args.has("--backend")) forced = args.backend();
    const std::string selector = args.value("--vulkan-device").toStdString();
    const BackendChoice choice = chooseBackend(forced, selector);
    OpenedBackend opened = openBackend(choice, selector);
    if (forced == BackendKind::Vulkan && choice.kind != BackendKind::Vulkan)
        opened.note = choice.reason;
    return opened;
}

void runWithCpuFallback(OpenedBackend& opened, std::unique_ptr<TransformerModel>& model,
                        const std::function<void()>& work) {
    try {
        work();
    } catch (const vk::VulkanError& error) {
        model.reset(); // its device tensors go before the Vulkan backend that owns their memory
        opened = {makeCpuBackend(),
                  std::string("Vulkan failed (") + error.what() + "); ran on the CPU backend"};
        work();
    }
}
std::unique_ptr<LoadedModel> loadChosenModel(const CliArgs& args, const char* command) {
    std::optional<BackendKind> forced;
    if (args.has("--backend")) forced = args.backend();
    const std::string selector = args.value("--vulkan-device").toStdString();
    std::unique_ptr<LoadedModel> loaded =
        loadCheckpoint(args.model(), chooseBackend(forced, selector), selector);
    if (!loaded->backendNote.isEmpty())
        std::fprintf(stderr, "headlight %s: %s\n", command, qPrintable(loaded->backendNote));
    return loaded;
}
} // namespace headlight::app
