#include "canvas_renderer.h"

#include "canvas_window.h"
#include "imgui_qt_input.h"

#include <QFile>
#include <QVulkanDeviceFunctions>
#include <QVulkanFunctions>
#include <algorithm>
#include <backends/imgui_impl_vulkan.h>
#include <cmath>
#include <imgui.h>
#include <stdexcept>
#include <tuple>

namespace headlight::render {
namespace {

constexpr VkClearColorValue kBackground{{0.11f, 0.12f, 0.14f, 1.0f}};
constexpr const char* kHudFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
// Latin-1 and Latin Extended-A (token labels), General Punctuation, arrows (the read-out) and
// Control Pictures (a visible space, ␣): ImGui bakes only the ranges it is given.
constexpr ImWchar kGlyphRanges[] = {0x0020, 0x017F, 0x2000, 0x206F, 0x2190, 0x21FF,
                                    0x2400, 0x243F, 0};

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
    if (QFile::exists(kHudFont)) io.Fonts->AddFontFromFileTTF(kHudFont, 15.0f, nullptr, kGlyphRanges);
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
    map_.create(window_);
    atlasOverview_.create(window_);
    atlasDetail_.create(window_);
    // Resources are recreated after a hide: upload the map and the atlas' pictures again.
    window_->mapChanged_ = true;
    window_->tilesChanged_[0] = window_->tilesChanged_[1] = true;
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
    map_.destroy();
    atlasOverview_.destroy();
    atlasDetail_.destroy();
    ImGui::SetCurrentContext(imgui_);
    ImGui_ImplVulkan_Shutdown();
    ImGui::DestroyContext(imgui_);
    imgui_ = nullptr;
    window_->vulkanInstance()->deviceFunctions(window_->device())
        ->vkDestroyDescriptorPool(window_->device(), descriptorPool_, nullptr);
    descriptorPool_ = VK_NULL_HANDLE;
}

void CanvasRenderer::buildOverlay() {
    // Bottom left, away from the map's title and first rows.
    ImGui::SetNextWindowPos(ImVec2(12.0f, ImGui::GetIO().DisplaySize.y - 12.0f), ImGuiCond_Always,
                            ImVec2(0.0f, 1.0f));
    ImGui::SetNextWindowBgAlpha(0.75f);
    const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing |
                                   ImGuiWindowFlags_NoNav;
    ImGui::Begin("HUD", nullptr, flags);
    ImGui::Text("Canvas: %s", deviceName_.toUtf8().constData());
    for (const QString& line : window_->hudLines())
        ImGui::TextUnformatted(line.toUtf8().constData());
    const CanvasMap& map = window_->map();
    if (window_->showsAtlas())
        atlasHud();
    else if (!map.empty())
        ImGui::Text("Map: %d × %d · %.2f px per cell", map.rows, map.cols,
                    window_->view().cellSize());
    ImGui::Text("Frame: %.2f ms CPU", window_->lastFrameMs());
    ImGui::End();
    if (window_->showsAtlas()) {
        const CanvasAtlas& atlas = window_->atlas();
        drawTitle(atlas.title);
        drawMapLabels(atlas.labels, atlas.labels, int(atlas.tokens), int(atlas.tokens));
    } else if (!map.empty()) {
        drawTitle(map.title);
        drawMapLabels(map.rowLabels, map.colLabels, map.rows, map.cols);
    } else {
        return;
    }
    drawReadout();
}

// The atlas' lines: its size, the region in view, and how the tiles drawn pool the weights.
void CanvasRenderer::atlasHud() {
    const CanvasAtlas& atlas = window_->atlas();
    const CanvasWindow::Region r = window_->visibleRegion();
    ImGui::Text("Atlas: %lld × %lld tokens · %.3g px per token", qlonglong(atlas.tokens),
                qlonglong(atlas.tokens), window_->view().cellSize());
    ImGui::Text("Region: queries %lld–%lld, keys %lld–%lld", qlonglong(r.q0), qlonglong(r.q1),
                qlonglong(r.k0), qlonglong(r.k1));
    const bool covered = window_->detailCoversView();
    const CanvasTiles& shown = covered ? atlas.detail : atlas.overview;
    const char* refining = covered ? "" : " · refining…";
    if (shown.empty())
        ImGui::Text("Tiles: pooling (%s)…", atlas.pooling.toUtf8().constData());
    else if (shown.tile == 1)
        ImGui::Text("Tiles: exact, one token each%s", refining);
    else
        ImGui::Text("Tiles: %s of %lld × %lld tokens%s", atlas.pooling.toUtf8().constData(),
                    qlonglong(shown.tile), qlonglong(shown.tile), refining);
}

void CanvasRenderer::drawTitle(const QString& title) {
    const QByteArray text = title.toUtf8();
    const ImVec2 titleSize = ImGui::CalcTextSize(text.constData());
    ImGui::GetForegroundDrawList()->AddText(
        ImVec2((ImGui::GetIO().DisplaySize.x - titleSize.x) / 2.0f, 12.0f),
        IM_COL32(235, 235, 235, 255), text.constData());
}

// Token labels beside the rows and above the columns in view, once a cell is tall enough for a
// line of text (so a 2,048-token map shows labels only when zoomed in, and never draws 2,048).
// Once the map's first column or row is scrolled out of the window (always, deep in an atlas),
// the labels stay at the window's left and top edges on a band over the cells.
void CanvasRenderer::drawMapLabels(const QStringList& rowLabels, const QStringList& colLabels,
                                   int rows, int cols) {
    const MapView& view = window_->view();
    const float line = ImGui::GetFontSize();
    if (view.cellSize() < line + 2.0) return;
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    ImDrawList* draw = ImGui::GetBackgroundDrawList();
    const ImU32 colour = IM_COL32(220, 220, 220, 255);
    const ImU32 band = IM_COL32(28, 31, 36, 255); // the canvas background
    const auto visible = [&](double start, int count, float extent) {
        const int first = std::max(0, int(std::floor(-start / view.cellSize())));
        const int last = std::min(count, int(std::ceil((extent - start) / view.cellSize())));
        return std::pair{first, last};
    };
    const QPointF mapEnd = view.cellCorner(rows, cols);
    const auto [row0, row1] = visible(view.origin().y(), rows, display.y);
    float widest = 0.0f;
    for (int r = row0; r < row1 && r < rowLabels.size(); ++r)
        widest = std::max(widest, ImGui::CalcTextSize(rowLabels[r].toUtf8().constData()).x);
    const float rowEdge = std::max(float(view.origin().x()), widest + 12.0f);
    if (rowEdge > float(view.origin().x()))
        draw->AddRectFilled(ImVec2(0.0f, std::max(0.0f, float(view.origin().y()))),
                            ImVec2(rowEdge, std::min(display.y, float(mapEnd.y()))), band);
    for (int r = row0; r < row1 && r < rowLabels.size(); ++r) {
        const QByteArray text = rowLabels[r].toUtf8();
        const float width = ImGui::CalcTextSize(text.constData()).x;
        const QPointF corner = view.cellCorner(r, 0);
        draw->AddText(
            ImVec2(rowEdge - width - 6.0f, float(corner.y() + (view.cellSize() - line) / 2.0)),
            colour, text.constData());
    }
    // Below the title's line (the band covers the cells under the title too).
    const float colEdge = std::max(float(view.origin().y()), 2.0f * line + 20.0f);
    if (colEdge > float(view.origin().y()))
        draw->AddRectFilled(ImVec2(std::max(rowEdge, float(view.origin().x())), 0.0f),
                            ImVec2(std::min(display.x, float(mapEnd.x())), colEdge), band);
    const auto [col0, col1] = visible(view.origin().x(), cols, display.x);
    for (int c = col0; c < col1 && c < colLabels.size(); ++c) {
        const QByteArray text = colLabels[c].toUtf8();
        const float width = ImGui::CalcTextSize(text.constData()).x;
        if (width > view.cellSize()) continue; // no room: the read-out names it
        const QPointF corner = view.cellCorner(0, c);
        if (float(corner.x() + view.cellSize()) <= rowEdge) continue; // under the row labels
        draw->AddText(
            ImVec2(float(corner.x() + (view.cellSize() - width) / 2.0), colEdge - line - 4.0f),
            colour, text.constData());
    }
}

void CanvasRenderer::drawReadout() {
    const QString readout = window_->readout();
    if (readout.isEmpty()) return;
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(readout.toUtf8().constData());
    ImGui::EndTooltip();
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

    for (MapPipeline* pipeline : {&map_, &atlasOverview_, &atlasDetail_})
        pipeline->beginFrame();
    if (window_->takeMapChange()) map_.upload(window_->map());
    uploadAtlas();
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
    if (window_->showsAtlas())
        recordAtlas(cmd, size, window_->devicePixelRatio());
    else
        map_.record(cmd, window_->view(), size, window_->devicePixelRatio());
    ImGui_ImplVulkan_RenderDrawData(ImGui::GetDrawData(), cmd);
    vk->vkCmdEndRenderPass(cmd);

    window_->frameReady();
    window_->noteFrame(double(frameTimer.nsecsElapsed()) / 1e6);
}

void CanvasRenderer::uploadAtlas() {
    const CanvasAtlas& atlas = window_->atlas();
    for (const auto& [layer, pipeline, tiles] :
         {std::tuple{AtlasLayer::Overview, &atlasOverview_, &atlas.overview},
          std::tuple{AtlasLayer::Detail, &atlasDetail_, &atlas.detail}})
        if (window_->takeTilesChange(layer))
            pipeline->upload(tiles->values, tiles->rows, tiles->cols, tiles->low, tiles->high,
                             atlas.colormap);
}

// Each picture placed at its first token with cells of `tile` tokens, clipped to the map (its
// last tiles may reach past the edge). Why the overview only while the detail does not cover
// the view: the detail's cell gaps would show it through.
void CanvasRenderer::recordAtlas(VkCommandBuffer cmd, QSize framebuffer, double dpr) {
    const CanvasAtlas& atlas = window_->atlas();
    const MapView& view = window_->view();
    const double extent = double(atlas.tokens) * view.cellSize();
    const QRectF clip(view.origin(), QSizeF(extent, extent));
    const auto draw = [&](const MapPipeline& pipeline, const CanvasTiles& tiles) {
        pipeline.record(cmd, view.cellCorner(int(tiles.row0), int(tiles.col0)),
                        view.cellSize() * double(tiles.tile), clip, framebuffer, dpr);
    };
    if (!window_->detailCoversView()) draw(atlasOverview_, atlas.overview);
    draw(atlasDetail_, atlas.detail);
}
} // namespace headlight::render
