#pragma once
// The Vulkan canvas: a QVulkanWindow that draws one attention map (CanvasMap, e.g. 2,048 × 2,048
// tokens) with its own graphics pipeline, and a Dear ImGui overlay: the HUD (devices, forward-pass
// and frame time, zoom), the map's title, token labels once cells are large enough, and a hover
// read-out (query token, key token, weight).
//
// In its atlas mode (setAtlas, canvas_atlas.h) it draws a T × T atlas at any T from pictures of
// pooled tiles instead, with the region in view, the pooling and the hovered tile in the HUD;
// each move tells viewMoved() so that the owner can have the region's tiles made, and hands them
// in with setAtlasTiles when they arrive.
//
// Navigation: wheel zooms about the cursor, left-drag pans, double-click, 0 or Home fits the map,
// + and − zoom about the centre, arrow keys pan; a click (without drag) selects a query row.

#include "canvas_atlas.h"
#include "canvas_map.h"

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

    // Replaces the map; the view fits it when its size changed (otherwise pan and zoom stay, so
    // stepping through heads keeps the region in view).
    void setMap(CanvasMap map);
    const CanvasMap& map() const { return map_; }
    // Shows `atlas` instead of the map (its pictures may still be empty); the view fits it when
    // its size changed. setMap leaves the atlas mode.
    void setAtlas(CanvasAtlas atlas);
    void setAtlasTiles(AtlasLayer layer, CanvasTiles tiles);
    bool showsAtlas() const { return !atlas_.empty(); }
    const CanvasAtlas& atlas() const { return atlas_; }
    // The token cells in view, clamped to the map: queries [q0, q1) and keys [k0, k1).
    struct Region {
        int64_t q0 = 0, q1 = 0, k0 = 0, k1 = 0;
    };
    Region visibleRegion() const;
    // Whether the detail picture covers the region in view (otherwise the overview shows).
    bool detailCoversView() const;
    MapView& view() { return view_; }
    const MapView& view() const { return view_; }
    void fitMap();
    // The cell under the mouse (invalid when none) and its read-out line.
    MapCell hoveredCell() const { return hovered_; }
    QString readout() const;

    quint64 framesRendered() const { return frames_; }
    double lastFrameMs() const { return lastFrameMs_; }

Q_SIGNALS:
    void frameRendered(quint64 frameIndex);
    void querySelected(int row); // a click on a cell of row `row`
    void viewMoved();            // pan, zoom, fit or resize

protected:
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    friend class CanvasRenderer;
    void noteFrame(double cpuMs);
    bool takeMapChange(); // whether the renderer must upload the map (resets the flag)
    bool takeTilesChange(AtlasLayer layer); // the same for an atlas picture
    int rowCount() const { return showsAtlas() ? int(atlas_.tokens) : map_.rows; }
    int colCount() const { return showsAtlas() ? int(atlas_.tokens) : map_.cols; }
    QString atlasReadout() const;
    void moved(); // the user moved the view: repaint and tell viewMoved()

    QStringList hudLines_;
    CanvasMap map_;
    MapView view_;
    MapCell hovered_;
    bool mapChanged_ = false;
    CanvasAtlas atlas_;
    bool tilesChanged_[2] = {false, false}; // per AtlasLayer
    bool fitted_ = false; // the view was fitted to this map and not moved since
    QPointF pressAt_, lastDrag_;
    bool dragging_ = false;
    quint64 frames_ = 0;
    double lastFrameMs_ = 0.0;
};
} // namespace headlight::render
