#pragma once
// Draws one canvas frame inside QVulkanWindow's default render pass: clear, the attention map
// (MapPipeline), then the Dear ImGui overlay. Owns the ImGui context and its Vulkan backend, and
// the map pipeline, for the window's lifetime.

#include "map_pipeline.h"

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
    void drawMapLabels();
    void drawReadout();

    CanvasWindow* window_;
    ImGuiContext* imgui_ = nullptr;
    VkDescriptorPool descriptorPool_ = VK_NULL_HANDLE;
    QElapsedTimer sinceLastFrame_;
    QString deviceName_;
    MapPipeline map_;
};
} // namespace headlight::render
