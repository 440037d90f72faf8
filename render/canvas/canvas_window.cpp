#include "canvas_window.h"

#include "canvas_renderer.h"
#include "imgui_qt_input.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QTimer>
#include <QWheelEvent>
#include <cmath>

namespace headlight::render {
namespace {
constexpr double kWheelStep = 1.25;  // zoom factor per wheel notch
constexpr double kClickSlop = 4.0;   // logical pixels a press may move and still be a click
constexpr double kKeyPanStep = 60.0; // logical pixels per arrow key
} // namespace

CanvasWindow::CanvasWindow() {
    // Why: with an sRGB swapchain ImGui's colours wash out; UNORM keeps them as designed.
    setPreferredColorFormats({VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_R8G8B8A8_UNORM});
    new ImGuiQtInput(this);
    // Why: frames are drawn on demand; a slow tick keeps the HUD's frame time current.
    auto* tick = new QTimer(this);
    connect(tick, &QTimer::timeout, this, &QWindow::requestUpdate);
    tick->start(500);
}

QVulkanWindowRenderer* CanvasWindow::createRenderer() {
    return new CanvasRenderer(this);
}

void CanvasWindow::setHudLines(const QStringList& lines) {
    hudLines_ = lines;
    requestUpdate();
}

void CanvasWindow::setMap(CanvasMap map) {
    const bool resized = map.rows != map_.rows || map.cols != map_.cols;
    map_ = std::move(map);
    mapChanged_ = true;
    if (resized || fitted_) fitMap();
    requestUpdate();
}

void CanvasWindow::fitMap() {
    view_.fit(size(), map_.rows, map_.cols);
    fitted_ = true;
    requestUpdate();
}

QString CanvasWindow::readout() const {
    if (!hovered_.valid() || map_.empty()) return {};
    const auto label = [](const QStringList& labels, int index) {
        return index < labels.size() ? QStringLiteral("“%1” (%2)").arg(labels[index]).arg(index)
                                     : QString::number(index);
    };
    return QStringLiteral("%1 %2 → %3 %4: %5")
        .arg(map_.rowAxis, label(map_.rowLabels, hovered_.row), map_.colAxis,
             label(map_.colLabels, hovered_.col))
        .arg(double(map_.at(hovered_.row, hovered_.col)), 0, 'f', 4);
}

bool CanvasWindow::takeMapChange() {
    const bool changed = mapChanged_;
    mapChanged_ = false;
    return changed;
}

void CanvasWindow::wheelEvent(QWheelEvent* event) {
    view_.zoomAt(event->position(), std::pow(kWheelStep, event->angleDelta().y() / 120.0));
    fitted_ = false;
    requestUpdate();
}

void CanvasWindow::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return;
    dragging_ = true;
    pressAt_ = lastDrag_ = event->position();
}

void CanvasWindow::mouseMoveEvent(QMouseEvent* event) {
    hovered_ = view_.cellAt(event->position(), map_.rows, map_.cols);
    if (dragging_) {
        view_.pan(event->position() - lastDrag_);
        lastDrag_ = event->position();
        fitted_ = false;
    }
    requestUpdate();
}

void CanvasWindow::mouseReleaseEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton || !dragging_) return;
    dragging_ = false;
    const QPointF moved = event->position() - pressAt_;
    if (std::hypot(moved.x(), moved.y()) > kClickSlop) return;
    const MapCell cell = view_.cellAt(event->position(), map_.rows, map_.cols);
    if (cell.valid()) Q_EMIT querySelected(cell.row);
}

void CanvasWindow::mouseDoubleClickEvent(QMouseEvent*) {
    fitMap();
}

void CanvasWindow::keyPressEvent(QKeyEvent* event) {
    const QPointF centre(width() / 2.0, height() / 2.0);
    switch (event->key()) {
    case Qt::Key_0:
        fitMap();
        return;
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        view_.zoomAt(centre, kWheelStep);
        break;
    case Qt::Key_Minus:
        view_.zoomAt(centre, 1.0 / kWheelStep);
        break;
    case Qt::Key_Left:
        view_.pan({kKeyPanStep, 0.0});
        break;
    case Qt::Key_Right:
        view_.pan({-kKeyPanStep, 0.0});
        break;
    case Qt::Key_Up:
        view_.pan({0.0, kKeyPanStep});
        break;
    case Qt::Key_Down:
        view_.pan({0.0, -kKeyPanStep});
        break;
    default:
        QVulkanWindow::keyPressEvent(event);
        return;
    }
    fitted_ = false;
    requestUpdate();
}

void CanvasWindow::resizeEvent(QResizeEvent* event) {
    QVulkanWindow::resizeEvent(event);
    if (fitted_) fitMap(); // a map the user has not moved keeps filling the window
}

void CanvasWindow::noteFrame(double cpuMs) {
    lastFrameMs_ = cpuMs;
    Q_EMIT frameRendered(++frames_);
}
} // namespace headlight::render
