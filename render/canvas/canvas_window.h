#pragma once
// The Vulkan canvas: a QVulkanWindow whose renderer clears to the figure background and draws a
// Dear ImGui overlay (the HUD: device names and frame time). Large attention views draw here.

#include <QElapsedTimer>
#include <QStringList>
#include <QVulkanWindow>

namespace headlight::render {

class CanvasWindow : public QVulkanWindow {
    Q_OBJECT
public:
    CanvasWindow();
    QVulkanWindowRenderer* createRenderer() override;

    // Lines shown in the HUD under the device name (e.g. the compute device and backend).
    void setHudLines(const QStringList& lines);
    QStringList hudLines() const { return hudLines_; }

    quint64 framesRendered() const { return frames_; }
    double lastFrameMs() const { return lastFrameMs_; }

Q_SIGNALS:
    void frameRendered(quint64 frameIndex);

private:
    friend class CanvasRenderer;
    void noteFrame(double cpuMs);

    QStringList hudLines_;
    quint64 frames_ = 0;
    double lastFrameMs_ = 0.0;
};
} // namespace headlight::render
