#include "canvas_renderer.h"

#include <QFile>
#include <QVulkanDeviceFunctions>
#include <QVulkanFunctions>
#include <imgui.h>
#include <backends/imgui_impl_vulkan.h>
#include <stdexcept>

#include "canvas_window.h"
#include "imgui_qt_input.h"

namespace headlight::render {
namespace {

constexpr VkClearColorValue kBackground{{0.11f, 0.12f, 0.14f, 1.0f}};
constexpr const char* kHudFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

void checkImGuiResult(VkResult result) {
    if (result != VK_SUCCESS) qWarning("Dear ImGui Vulkan backend: VkResult %d", int(result));
}
} // namespace

CanvasRenderer::CanvasRenderer(CanvasWindow* window) : window_(window) {}

void CanvasRenderer::initResources() {
    QVulkanDeviceFunctions* vk = window_->vulkanInstance()->deviceFunctions(window_->device());
    const VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 16}};
    VkDescriptorPoolCreateInfo poolInfo{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    poolInfo.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
    poolInfo.maxSets = 16;
    poolInfo.poolSizeCount = 1;
    poolInfo.pPoolSizes = sizes;
    if (vk->vkCreateDescriptorPool(window_->device(), &poolInfo, nullptr, &descriptorPool_) != VK_SUCCESS)
        throw std::runtime_error("canvas: cannot create a descriptor pool");

    imgui_ = ImGui::CreateContext();
    ImGui::SetCurrentContext(imgui_);
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr; // Why: the HUD has no layout worth saving beside the user's files.
    ImGuiQtInput::mapKeys();
    if (QFile::exists(kHudFont)) io.Fonts->AddFontFromFileTTF(kHudFont, 15.0f);
    ImGui::StyleColorsDark();

    VkPhysicalDeviceProperties props;
    window_->vulkanInstance()->functions()->vkGetPhysicalDeviceProperties(window_->physicalDevice(), &props);
    deviceName_ = QString::fromUtf8(props.deviceName);

    ImGui_ImplVulkan_InitInfo info{};
    info.Instance = window_->vulkanInstance()->vkInstance();
    info.PhysicalDevice = window_->physicalDevice();
    info.Device = window_->device();
    info.QueueFamily = window_->graphicsQueueFamilyIndex();
    info.Queue = window_->graphicsQueue();
    info.DescriptorPool = descriptorPool_;
    info.MinImageCount = 2;
    info.ImageCount = QVulkanWindow::MAX_CONCURRENT_FRAME_COUNT;
    info.MSAASamples = VK_SAMPLE_COUNT_1_BIT;
    info.CheckVkResultFn = &checkImGuiResult;
    ImGui_ImplVulkan_Init(&info, window_->defaultRenderPass());
    uploadFonts();
    sinceLastFrame_.start();
}

void CanvasRenderer::uploadFonts() {
    QVulkanDeviceFunctions* vk = window_->vulkanInstance()->deviceFunctions(window_->device());
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = window_->graphicsCommandPool();
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    vk->vkAllocateCommandBuffers(window_->device(), &alloc, &cmd);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vk->vkBeginCommandBuffer(cmd, &begin);
    ImGui_ImplVulkan_CreateFontsTexture(cmd);
    vk->vkEndCommandBuffer(cmd);
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    vk->vkQueueSubmit(window_->graphicsQueue(), 1, &submit, VK_NULL_HANDLE);
    vk->vkQueueWaitIdle(window_->graphicsQueue());
    vk->vkFreeCommandBuffers(window_->device(), window_->graphicsCommandPool(), 1, &cmd);
    ImGui_ImplVulkan_DestroyFontUploadObjects();
}

void CanvasRenderer::releaseResources() {
    ImGui::SetCurrentContext(imgui_);
    ImGui_ImplVulkan_Shutdown();
    ImGui::DestroyContext(imgui_);
    imgui_ = nullptr;
    window_->vulkanInstance()->deviceFunctions(window_->device())
        ->vkDestroyDescriptorPool(window_->device(), descriptorPool_, nullptr);
    descriptorPool_ = VK_NULL_HANDLE;
}

void CanvasRenderer::buildOverlay() {
    ImGui::SetNextWindowPos(ImVec2(12, 12), ImGuiCond_Always);
    ImGui::SetNextWindowBgAlpha(0.75f);
    const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing |
                                   ImGuiWindowFlags_NoNav;
    ImGui::Begin("HUD", nullptr, flags);
    ImGui::Text("Canvas: %s", deviceName_.toUtf8().constData());
    for (const QString& line : window_->hudLines()) ImGui::TextUnformatted(line.toUtf8().constData());
    ImGui::Text("Frame: %.2f ms CPU", window_->lastFrameMs());
    ImGui::End();
}

void CanvasRenderer::startNextFrame() {
    QElapsedTimer frameTimer;
    frameTimer.start();
    ImGui::SetCurrentContext(imgui_);
    ImGuiIO& io = ImGui::GetIO();
    const QSize size = window_->swapChainImageSize();
    io.DisplaySize = ImVec2(float(size.width()) / float(window_->devicePixelRatio()),
                            float(size.height()) / float(window_->devicePixelRatio()));
    io.DisplayFramebufferScale = ImVec2(float(window_->devicePixelRatio()), float(window_->devicePixelRatio()));
    io.DeltaTime = std::max(1e-4f, float(sinceLastFrame_.restart()) / 1000.0f);

    ImGui_ImplVulkan_NewFrame();
    ImGui::NewFrame();
    buildOverlay();
    ImGui::Render();

    VkClearValue clear[2]{};
    clear[0].color = kBackground;
    clear[1].depthStencil = {1.0f, 0};
    VkRenderPassBeginInfo pass{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
    pass.renderPass = window_->defaultRenderPass();
    pass.framebuffer = window_->currentFramebuffer();
    pass.renderArea.extent = {uint32_t(size.width()), uint32_t(size.height())};
    pass.clearValueCount = 2;
    pass.pClearValues = clear;
    VkCommandBuffer cmd = window_->currentCommandBuffer();
    QVulkanDeviceFunctions* vk = window_->vulkanInstance()->deviceFunctions(window_->device());
    vk->vkCmdBeginRenderPass(cmd, &pass, VK_SUBPASS_CONTENTS_INLINE);
    ImGui_ImplVulkan_RenderDrawData(ImGui::GetDrawData(), cmd);
    vk->vkCmdEndRenderPass(cmd);

    window_->frameReady();
    window_->noteFrame(double(frameTimer.nsecsElapsed()) / 1e6);
}
} // namespace headlight::render
