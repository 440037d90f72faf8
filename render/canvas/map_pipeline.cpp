#include "map_pipeline.h"

#include "canvas_map.h"
#include "shader_registry.h"

#include <QVulkanDeviceFunctions>
#include <QVulkanWindow>
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace headlight::render {
namespace {

// canvas_map_fragment's push constants.
struct MapPush {
    float originX, originY, cellSize, dpr;
    uint32_t rows, cols;
    float low, high;
};

void check(VkResult result, const char* what) {
    if (result != VK_SUCCESS)
        throw std::runtime_error(std::string("canvas: cannot create ") + what + " (VkResult " +
                                 std::to_string(int(result)) + ")");
}

VkShaderModule shaderModule(QVulkanDeviceFunctions* vk, VkDevice device, const char* name) {
    const shaders::EmbeddedShader* shader = shaders::find(name);
    if (!shader) throw std::runtime_error(std::string("canvas: no embedded shader ") + name);
    VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = shader->wordCount * sizeof(uint32_t);
    info.pCode = shader->words;
    VkShaderModule module = VK_NULL_HANDLE;
    check(vk->vkCreateShaderModule(device, &info, nullptr, &module), "a shader module");
    return module;
}

// The colour table as RGBA8 words (R in the low byte, as unpackUnorm4x8 reads it).
std::vector<uint32_t> colourTable(Colormap map) {
    std::vector<uint32_t> words;
    for (int i = 0; i < 256; ++i) {
        const QColor c = colorAt(map, i / 255.0);
        words.push_back(uint32_t(c.red()) | uint32_t(c.green()) << 8 | uint32_t(c.blue()) << 16 |
                        0xffu << 24);
    }
    return words;
}
} // namespace

void MapPipeline::create(QVulkanWindow* window) {
    window_ = window;
    device_ = window->device();
    vk_ = window->vulkanInstance()->deviceFunctions(device_);
    createLayouts();
    createPipeline();
}

void MapPipeline::createLayouts() {
    VkDescriptorSetLayoutBinding binding{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                         VK_SHADER_STAGE_FRAGMENT_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo setInfo{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    setInfo.bindingCount = 1;
    setInfo.pBindings = &binding;
    check(vk_->vkCreateDescriptorSetLayout(device_, &setInfo, nullptr, &setLayout_),
          "a set layout");
    const VkPushConstantRange push{VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof(MapPush)};
    VkPipelineLayoutCreateInfo layoutInfo{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layoutInfo.setLayoutCount = 1;
    layoutInfo.pSetLayouts = &setLayout_;
    layoutInfo.pushConstantRangeCount = 1;
    layoutInfo.pPushConstantRanges = &push;
    check(vk_->vkCreatePipelineLayout(device_, &layoutInfo, nullptr, &layout_),
          "a pipeline layout");
    // The drawn buffer's set and those of the buffers frames in flight may still read.
    constexpr uint32_t kSets = QVulkanWindow::MAX_CONCURRENT_FRAME_COUNT + 1;
    const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSets};
    VkDescriptorPoolCreateInfo poolInfo{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    poolInfo.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
    poolInfo.maxSets = kSets;
    poolInfo.poolSizeCount = 1;
    poolInfo.pPoolSizes = &size;
    check(vk_->vkCreateDescriptorPool(device_, &poolInfo, nullptr, &pool_), "a descriptor pool");
}

void MapPipeline::createPipeline() {
    const VkShaderModule vertex = shaderModule(vk_, device_, "canvas_map_vertex");
    const VkShaderModule fragment = shaderModule(vk_, device_, "canvas_map_fragment");
    VkPipelineShaderStageCreateInfo stages[2]{};
    stages[0] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                 nullptr,
                 0,
                 VK_SHADER_STAGE_VERTEX_BIT,
                 vertex,
                 "main",
                 nullptr};
    stages[1] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                 nullptr,
                 0,
                 VK_SHADER_STAGE_FRAGMENT_BIT,
                 fragment,
                 "main",
                 nullptr};
    VkPipelineVertexInputStateCreateInfo vertexInput{
        VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
    VkPipelineInputAssemblyStateCreateInfo assembly{
        VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
    assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
    VkPipelineViewportStateCreateInfo viewport{
        VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
    viewport.viewportCount = viewport.scissorCount = 1;
    VkPipelineRasterizationStateCreateInfo raster{
        VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
    raster.polygonMode = VK_POLYGON_MODE_FILL;
    raster.cullMode = VK_CULL_MODE_NONE;
    raster.lineWidth = 1.0f;
    VkPipelineMultisampleStateCreateInfo multisample{
        VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
    multisample.rasterizationSamples = window_->sampleCountFlagBits();
    VkPipelineDepthStencilStateCreateInfo depth{
        VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO};
    VkPipelineColorBlendAttachmentState attachment{};
    attachment.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                                VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
    VkPipelineColorBlendStateCreateInfo blend{
        VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
    blend.attachmentCount = 1;
    blend.pAttachments = &attachment;
    const VkDynamicState dynamics[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
    VkPipelineDynamicStateCreateInfo dynamic{VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
    dynamic.dynamicStateCount = 2;
    dynamic.pDynamicStates = dynamics;
    VkGraphicsPipelineCreateInfo info{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
    info.stageCount = 2;
    info.pStages = stages;
    info.pVertexInputState = &vertexInput;
    info.pInputAssemblyState = &assembly;
    info.pViewportState = &viewport;
    info.pRasterizationState = &raster;
    info.pMultisampleState = &multisample;
    info.pDepthStencilState = &depth;
    info.pColorBlendState = &blend;
    info.pDynamicState = &dynamic;
    info.layout = layout_;
    info.renderPass = window_->defaultRenderPass();
    const VkResult result =
        vk_->vkCreateGraphicsPipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline_);
    vk_->vkDestroyShaderModule(device_, vertex, nullptr);
    vk_->vkDestroyShaderModule(device_, fragment, nullptr);
    check(result, "the map pipeline");
}

void MapPipeline::release(const Retired& retired) {
    vk_->vkDestroyBuffer(device_, retired.buffer, nullptr);
    vk_->vkFreeMemory(device_, retired.memory, nullptr);
    vk_->vkFreeDescriptorSets(device_, pool_, 1, &retired.set);
}

// Why frame_ − 1 + count: the last frame that can have recorded the buffer is the one before
// this, and QVulkanWindow waits for a frame's fence before the frame `count` later begins.
void MapPipeline::retireBuffer() {
    if (buffer_ == VK_NULL_HANDLE) return;
    retired_.push_back(
        {buffer_, memory_, set_, frame_ - 1 + quint64(window_->concurrentFrameCount())});
    buffer_ = VK_NULL_HANDLE;
    memory_ = VK_NULL_HANDLE;
    set_ = VK_NULL_HANDLE;
}

void MapPipeline::beginFrame() {
    ++frame_;
    const auto done = std::remove_if(retired_.begin(), retired_.end(), [this](const Retired& r) {
        if (r.freeAt > frame_) return false;
        release(r);
        return true;
    });
    retired_.erase(done, retired_.end());
}

void MapPipeline::upload(const CanvasMap& map) {
    upload(map.values, map.rows, map.cols, map.low, map.high, map.colormap);
}

void MapPipeline::upload(const std::vector<float>& values, int rows, int cols, float low,
                         float high, Colormap colormap) {
    retireBuffer();
    if (rows == 0 || cols == 0) return;
    std::vector<uint32_t> words = colourTable(colormap);
    const std::size_t tableBytes = words.size() * sizeof(uint32_t);
    const VkDeviceSize bytes = tableBytes + values.size() * sizeof(float);
    VkBufferCreateInfo bufferInfo{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bufferInfo.size = bytes;
    bufferInfo.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    check(vk_->vkCreateBuffer(device_, &bufferInfo, nullptr, &buffer_), "the map buffer");
    VkMemoryRequirements needs;
    vk_->vkGetBufferMemoryRequirements(device_, buffer_, &needs);
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = needs.size;
    alloc.memoryTypeIndex = window_->hostVisibleMemoryIndex();
    if (!(needs.memoryTypeBits & (1u << alloc.memoryTypeIndex)))
        throw std::runtime_error("canvas: the device cannot map a storage buffer for the map");
    check(vk_->vkAllocateMemory(device_, &alloc, nullptr, &memory_), "the map memory");
    vk_->vkBindBufferMemory(device_, buffer_, memory_, 0);
    void* mapped = nullptr;
    check(vk_->vkMapMemory(device_, memory_, 0, VK_WHOLE_SIZE, 0, &mapped), "a mapping");
    std::memcpy(mapped, words.data(), tableBytes);
    std::memcpy(static_cast<char*>(mapped) + tableBytes, values.data(),
                values.size() * sizeof(float));
    const VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, memory_, 0,
                                    VK_WHOLE_SIZE};
    vk_->vkFlushMappedMemoryRanges(device_, 1, &range);
    vk_->vkUnmapMemory(device_, memory_);
    VkDescriptorSetAllocateInfo setAlloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    setAlloc.descriptorPool = pool_;
    setAlloc.descriptorSetCount = 1;
    setAlloc.pSetLayouts = &setLayout_;
    check(vk_->vkAllocateDescriptorSets(device_, &setAlloc, &set_), "a descriptor set");
    const VkDescriptorBufferInfo described{buffer_, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = set_;
    write.descriptorCount = 1;
    write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    write.pBufferInfo = &described;
    vk_->vkUpdateDescriptorSets(device_, 1, &write, 0, nullptr);
    rows_ = uint32_t(rows);
    cols_ = uint32_t(cols);
    low_ = low;
    high_ = high;
}

void MapPipeline::record(VkCommandBuffer cmd, const MapView& view, QSize framebuffer,
                         double dpr) const {
    record(cmd, view.origin(), view.cellSize(),
           QRectF(0.0, 0.0, framebuffer.width() / dpr, framebuffer.height() / dpr), framebuffer,
           dpr);
}

void MapPipeline::record(VkCommandBuffer cmd, QPointF origin, double cellSize, const QRectF& clip,
                         QSize framebuffer, double dpr) const {
    if (!hasMap()) return;
    const VkViewport viewport{0.0f, 0.0f, float(framebuffer.width()), float(framebuffer.height()),
                              0.0f, 1.0f};
    const QRect pixels = QRectF(clip.topLeft() * dpr, clip.bottomRight() * dpr)
                             .toAlignedRect()
                             .intersected(QRect(QPoint(0, 0), framebuffer));
    if (pixels.isEmpty()) return;
    const VkRect2D scissor{{pixels.x(), pixels.y()},
                           {uint32_t(pixels.width()), uint32_t(pixels.height())}};
    vk_->vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline_);
    vk_->vkCmdSetViewport(cmd, 0, 1, &viewport);
    vk_->vkCmdSetScissor(cmd, 0, 1, &scissor);
    vk_->vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, layout_, 0, 1, &set_, 0,
                                 nullptr);
    const MapPush push{float(origin.x()),
                       float(origin.y()),
                       float(cellSize),
                       float(dpr),
                       rows_,
                       cols_,
                       low_,
                       high_};
    vk_->vkCmdPushConstants(cmd, layout_, VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof push, &push);
    vk_->vkCmdDraw(cmd, 3, 1, 0, 0);
}

void MapPipeline::destroy() {
    if (!vk_) return; // QVulkanWindow waits for the device before releasing resources
    retireBuffer();
    for (const Retired& retired : retired_)
        release(retired);
    retired_.clear();
    vk_->vkDestroyPipeline(device_, pipeline_, nullptr);
    vk_->vkDestroyPipelineLayout(device_, layout_, nullptr);
    vk_->vkDestroyDescriptorPool(device_, pool_, nullptr);
    vk_->vkDestroyDescriptorSetLayout(device_, setLayout_, nullptr);
    pipeline_ = VK_NULL_HANDLE;
    layout_ = VK_NULL_HANDLE;
    pool_ = VK_NULL_HANDLE;
    setLayout_ = VK_NULL_HANDLE;
    set_ = VK_NULL_HANDLE;
}
} // namespace headlight::render
