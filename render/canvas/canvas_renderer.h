#pragma once
// Draws one canvas frame inside QVulkanWindow's default render pass: clear, the attention map
// (MapPipeline) or the atlas' pictures (one MapPipeline each), then the Dear ImGui overlay. Owns
// the ImGui context and its Vulkan backend, and the map pipelines, for the window's lifetime.

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
    void atlasHud();
    void drawTitle(const QString& title);
    void drawMapLabels(const QStringList& rowLabels, const QStringList& colLabels, int rows,
                       int cols);
    void drawReadout();
    void uploadAtlas();
    void recordAtlas(VkCommandBuffer cmd, QSize framebuffer, double dpr);

    CanvasWindow* window_;
    ImGuiContext* imgui_ = nullptr;
    VkDescriptorPool descriptorPool_ = VK_NULL_HANDLE;
    QElapsedTimer sinceLastFrame_;
    QString deviceName_;
    MapPipeline map_;
    MapPipeline atlasOverview_, atlasDetail_;
};
} // namespace headlight::render
