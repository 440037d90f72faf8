#pragma once
// The canvas' attention map on the GPU: a graphics pipeline (shaders/canvas_map_vertex.vert and
// canvas_map_fragment.frag) in the window's default render pass, drawing from one host-visible
// storage buffer that holds the colour table and the values. One full-screen triangle per frame:
// the fragment shader finds each pixel's cell, so a 2,048 × 2,048 map costs one buffer read per
// pixel whatever the zoom. The atlas (canvas_atlas.h) draws its pictures of tiles with one
// MapPipeline each, placed and clipped on the token grid.

#include "colormap.h"

#include <QPointF>
#include <QRectF>
#include <QSize>
#include <vector>
#include <vulkan/vulkan.h>

class QVulkanDeviceFunctions;
class QVulkanWindow;

namespace headlight::render {

struct CanvasMap;
class MapView;

class MapPipeline {
public:
    void create(QVulkanWindow* window); // in initResources; throws std::runtime_error
    void destroy();                     // in releaseResources
    // Called once at the start of each frame: frees the buffers no frame in flight reads.
    void beginFrame();
    // Replaces the drawn map, without waiting: the old buffer is freed once the frames in flight
    // that read it are done.
    void upload(const CanvasMap& map);
    // The same for `values` [rows, cols] coloured over [low, high].
    void upload(const std::vector<float>& values, int rows, int cols, float low, float high,
                Colormap colormap);
    bool hasMap() const { return buffer_ != VK_NULL_HANDLE; }
    // Draws into the render pass begun on `cmd`, over `framebuffer` pixels at `dpr`.
    void record(VkCommandBuffer cmd, const MapView& view, QSize framebuffer, double dpr) const;
    // The same with cell (0, 0)'s corner at `origin`, `cellSize` logical pixels a cell, drawn only
    // inside `clip` (logical pixels; nothing when it misses the framebuffer).
    void record(VkCommandBuffer cmd, QPointF origin, double cellSize, const QRectF& clip,
                QSize framebuffer, double dpr) const;

private:
    void createLayouts();
    void createPipeline();
    void retireBuffer();
    // A buffer and its descriptor set, freed once frame `freeAt` begins.
    struct Retired {
        VkBuffer buffer;
        VkDeviceMemory memory;
        VkDescriptorSet set;
        quint64 freeAt;
    };
    void release(const Retired& retired);

    QVulkanWindow* window_ = nullptr;
    QVulkanDeviceFunctions* vk_ = nullptr;
    VkDevice device_ = VK_NULL_HANDLE;
    VkDescriptorSetLayout setLayout_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
    VkDescriptorPool pool_ = VK_NULL_HANDLE;
    VkDescriptorSet set_ = VK_NULL_HANDLE;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    std::vector<Retired> retired_;
    quint64 frame_ = 0; // frames begun
    uint32_t rows_ = 0, cols_ = 0;
    float low_ = 0.0f, high_ = 1.0f;
};
} // namespace headlight::render
