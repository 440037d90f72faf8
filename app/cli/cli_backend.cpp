#include "cli_backend.h"

#include "backend/vulkan/vk_error.h"

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
} // namespace headlight::app
