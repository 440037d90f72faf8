#include "canvas_window.h"

#include "canvas_renderer.h"
#include "imgui_qt_input.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QTimer>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace headlight::render {
namespace {
constexpr double kWheelStep = 1.25;  // zoom factor per wheel notch
constexpr double kClickSlop = 4.0;   // logical pixels a press may move and still be a click
constexpr double kKeyPanStep = 60.0; // logical pixels per arrow key

QString labelOf(const QStringList& labels, int index) {
    return index < labels.size() ? QStringLiteral("“%1” (%2)").arg(labels[index]).arg(index)
                                 : QString::number(index);
}
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
    const bool resized = map.rows != rowCount() || map.cols != colCount();
    if (showsAtlas()) {
        atlas_ = {};
        tilesChanged_[0] = tilesChanged_[1] = true; // the renderer frees the pictures' buffers
    }
    map_ = std::move(map);
    mapChanged_ = true;
    if (resized || fitted_) fitMap();
    requestUpdate();
}

void CanvasWindow::setAtlas(CanvasAtlas atlas) {
    const bool resized = !showsAtlas() || atlas.tokens != atlas_.tokens;
    if (!map_.empty()) {
        map_ = {};
        mapChanged_ = true; // the renderer frees the map's buffer
    }
    atlas_ = std::move(atlas);
    tilesChanged_[0] = tilesChanged_[1] = true;
    if (resized || fitted_) fitMap();
    requestUpdate();
}

void CanvasWindow::setAtlasTiles(AtlasLayer layer, CanvasTiles tiles) {
    (layer == AtlasLayer::Overview ? atlas_.overview : atlas_.detail) = std::move(tiles);
    tilesChanged_[int(layer)] = true;
    requestUpdate();
}

CanvasWindow::Region CanvasWindow::visibleRegion() const {
    const auto span = [this](double origin, double extent, int count) {
        const double first = std::floor(-origin / view_.cellSize());
        const double last = std::ceil((extent - origin) / view_.cellSize());
        return std::pair{int64_t(std::clamp(first, 0.0, double(count))),
                         int64_t(std::clamp(last, 0.0, double(count)))};
    };
    const auto [q0, q1] = span(view_.origin().y(), height(), rowCount());
    const auto [k0, k1] = span(view_.origin().x(), width(), colCount());
    return {q0, q1, k0, k1};
}

bool CanvasWindow::detailCoversView() const {
    const Region r = visibleRegion();
    return atlas_.detail.covers(r.q0, r.q1, r.k0, r.k1, atlas_.tokens);
}

void CanvasWindow::fitMap() {
    view_.fit(size(), rowCount(), colCount());
    fitted_ = true;
    requestUpdate();
    Q_EMIT viewMoved();
}

QString CanvasWindow::readout() const {
    if (showsAtlas()) return atlasReadout();
    if (!hovered_.valid() || map_.empty()) return {};
    return QStringLiteral("%1 %2 → %3 %4: %5")
        .arg(map_.rowAxis, labelOf(map_.rowLabels, hovered_.row), map_.colAxis,
             labelOf(map_.colLabels, hovered_.col))
        .arg(double(map_.at(hovered_.row, hovered_.col)), 0, 'f', 4);
}

// The finer picture's tile under the cursor: "query “a” (5) → key “b” (7): 0.0123 (mean of
// 64 × 64 tokens)", without the parenthesis once tiles are single tokens.
QString CanvasWindow::atlasReadout() const {
    if (!hovered_.valid()) return {};
    const CanvasTiles* picture = &atlas_.detail;
    std::optional<float> value = picture->valueAt(hovered_.row, hovered_.col);
    if (!value) {
        picture = &atlas_.overview;
        value = picture->valueAt(hovered_.row, hovered_.col);
    }
    QString line =
        QStringLiteral("query %1 → key %2")
            .arg(labelOf(atlas_.labels, hovered_.row), labelOf(atlas_.labels, hovered_.col));
    if (!value) return line;
    line += QStringLiteral(": %1").arg(double(*value), 0, 'f', 4);
    if (picture->tile > 1)
        line += QStringLiteral(" (%1 of %2 × %2 tokens)").arg(atlas_.pooling).arg(picture->tile);
    return line;
}

bool CanvasWindow::takeMapChange() {
    const bool changed = mapChanged_;
    mapChanged_ = false;
    return changed;
}

bool CanvasWindow::takeTilesChange(AtlasLayer layer) {
    const bool changed = tilesChanged_[int(layer)];
    tilesChanged_[int(layer)] = false;
    return changed;
}

void CanvasWindow::moved() {
    fitted_ = false;
    requestUpdate();
    Q_EMIT viewMoved();
}

void CanvasWindow::wheelEvent(QWheelEvent* event) {
    view_.zoomAt(event->position(), std::pow(kWheelStep, event->angleDelta().y() / 120.0));
    moved();
}

void CanvasWindow::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return;
    dragging_ = true;
    pressAt_ = lastDrag_ = event->position();
}

void CanvasWindow::mouseMoveEvent(QMouseEvent* event) {
    hovered_ = view_.cellAt(event->position(), rowCount(), colCount());
    if (dragging_) {
        view_.pan(event->position() - lastDrag_);
        lastDrag_ = event->position();
        moved();
    }
    requestUpdate();
}

void CanvasWindow::mouseReleaseEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton || !dragging_) return;
    dragging_ = false;
    const QPointF moved = event->position() - pressAt_;
    if (std::hypot(moved.x(), moved.y()) > kClickSlop) return;
    const MapCell cell = view_.cellAt(event->position(), rowCount(), colCount());
    if (cell.valid()) Q_EMIT querySelected(cell.row);
}

void CanvasWindow::mouseDoubleClickEvent(QMouseEvent*) {
    fitMap();
}

void CanvasWindow::keyPressEvent(QKeyEvent* event) {
    const QPointF centre(width() / 2.0, height() / 2.0);
    switch (event->key()) {
    case Qt::Key_0:
    case Qt::Key_Home:
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
    moved();
}

void CanvasWindow::resizeEvent(QResizeEvent* event) {
    QVulkanWindow::resizeEvent(event);
    if (fitted_)
        fitMap(); // a map the user has not moved keeps filling the window
    else
        Q_EMIT viewMoved();
}

void CanvasWindow::noteFrame(double cpuMs) {
    lastFrameMs_ = cpuMs;
    Q_EMIT frameRendered(++frames_);
}
} // namespace headlight::render
