#include "canvas_window.h"

#include <QTimer>

#include "canvas_renderer.h"
#include "imgui_qt_input.h"

namespace headlight::render {

CanvasWindow::CanvasWindow() {
    // Why: with an sRGB swapchain ImGui's colours wash out; UNORM keeps them as designed.
    setPreferredColorFormats({VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_R8G8B8A8_UNORM});
    new ImGuiQtInput(this);
    // Why: frames are drawn on demand; a slow tick keeps the HUD's frame time current.
    auto* tick = new QTimer(this);
    connect(tick, &QTimer::timeout, this, &QWindow::requestUpdate);
    tick->start(500);
}

QVulkanWindowRenderer* CanvasWindow::createRenderer() { return new CanvasRenderer(this); }

void CanvasWindow::setHudLines(const QStringList& lines) {
    hudLines_ = lines;
    requestUpdate();
}

void CanvasWindow::noteFrame(double cpuMs) {
    lastFrameMs_ = cpuMs;
    Q_EMIT frameRendered(++frames_);
}
} // namespace headlight::render
