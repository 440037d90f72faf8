#pragma once
// Draws one canvas frame: clear, then the Dear ImGui overlay, inside QVulkanWindow's default
// render pass. Owns the ImGui context and its Vulkan backend for the window's lifetime.

#include <QElapsedTimer>
#include <QVulkanWindowRenderer>

struct ImGuiContext;

namespace headlight::render {

class CanvasWindow;

class CanvasRenderer : public QVulkanWindowRenderer {
public:
    explicit CanvasRenderer(CanvasWindow* window);
    void initResources() override;
    void releaseResources() override;
    void startNextFrame() override;

private:
    void uploadFonts();
    void buildOverlay();

    CanvasWindow* window_;
    ImGuiContext* imgui_ = nullptr;
    VkDescriptorPool descriptorPool_ = VK_NULL_HANDLE;
    QElapsedTimer sinceLastFrame_;
    QString deviceName_;
};
} // namespace headlight::render
