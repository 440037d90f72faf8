#pragma once
// The Atlas tab's atlas on the Vulkan canvas (render/canvas/canvas_window.h, its atlas mode): the
// same atlas, labels, pooling and colour map as the tab. The canvas draws the whole map's
// overview under the picture of the region in view; each pan or zoom asks AtlasTileLoader for
// the region now in view (at most kAtlasCellsPerSide tiles a side, as the tab asks), pooled off
// the GUI thread, and the picture is handed to the canvas when it arrives: frames never wait for
// tiles.

#include "atlas_tile_loader.h"
#include "canvas/canvas_atlas.h"

#include <QObject>
#include <QPointer>
#include <memory>

namespace headlight::render {
class CanvasWindow;
}

namespace headlight::app {

class AtlasPage;

class AtlasCanvas : public QObject {
    Q_OBJECT
public:
    // Follows `page`'s newest atlas and pooling while the canvas shows one.
    AtlasCanvas(render::CanvasWindow* canvas, AtlasPage* page, QObject* parent = nullptr);

    // Shows the page's atlas on the canvas, unless it shows it already (then it follows the
    // page's colour map); false when the page has no atlas (its pass has not finished).
    bool show();
    AtlasTileLoader& loader() { return *loader_; }
    AtlasTileLoader& overviewLoader() { return *overviewLoader_; }

private:
    bool active() const; // the canvas shows this atlas
    QString poolingName() const;
    void requestRegion();
    void requestOverview();
    AtlasTileRequest requestFor(const analysis::AtlasRegion& region) const;

    QPointer<render::CanvasWindow> canvas_;
    AtlasPage* page_;
    AtlasTileLoader* loader_;
    AtlasTileLoader* overviewLoader_;
    std::shared_ptr<const analysis::AttentionAtlas> atlas_;
};

// A loader's picture as the canvas draws it: its tiles placed at the region's first token,
// coloured over the picture's own colour bar.
render::CanvasTiles canvasTilesOf(const AtlasPicture& picture);
} // namespace headlight::app
