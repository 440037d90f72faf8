#include "atlas_canvas.h"

#include "atlas_figure.h"
#include "atlas_page.h"
#include "canvas/canvas_window.h"

#include <QComboBox>

namespace headlight::app {

AtlasCanvas::AtlasCanvas(render::CanvasWindow* canvas, AtlasPage* page, QObject* parent)
    : QObject(parent)
    , canvas_(canvas)
    , page_(page)
    , loader_(new AtlasTileLoader(this))
    , overviewLoader_(new AtlasTileLoader(this)) {
    connect(canvas, &render::CanvasWindow::viewMoved, this, [this] {
        if (active()) requestRegion();
    });
    connect(loader_, &AtlasTileLoader::loaded, this,
            [this](std::shared_ptr<const AtlasPicture> picture) {
                if (active())
                    canvas_->setAtlasTiles(render::AtlasLayer::Detail, canvasTilesOf(*picture));
            });
    connect(overviewLoader_, &AtlasTileLoader::loaded, this,
            [this](std::shared_ptr<const AtlasPicture> picture) {
                if (active())
                    canvas_->setAtlasTiles(render::AtlasLayer::Overview, canvasTilesOf(*picture));
            });
    // Why after the page's own handlers (connected in its constructor): they set what is read.
    connect(&page->runner(), &AtlasRunner::finished, this, [this] {
        if (active()) show();
    });
    connect(page->poolingBox(), &QComboBox::currentIndexChanged, this, [this] {
        if (!active()) return;
        render::CanvasAtlas shown = canvas_->atlas(); // its pictures stay until the new ones come
        shown.pooling = poolingName();
        canvas_->setAtlas(std::move(shown));
        requestOverview();
        requestRegion();
    });
}

bool AtlasCanvas::show() {
    const AtlasResult* result = page_->result();
    if (!canvas_ || !result || !result->atlas) return false;
    if (active() && atlas_ == result->atlas) {
        // Another colour map recolours the pictures the canvas has: their values stay.
        if (canvas_->atlas().colormap != page_->view()->colormap()) {
            render::CanvasAtlas shown = canvas_->atlas();
            shown.colormap = page_->view()->colormap();
            canvas_->setAtlas(std::move(shown));
        }
        return true;
    }
    atlas_ = result->atlas;
    render::CanvasAtlas shown;
    shown.tokens = atlas_->tokens();
    shown.colormap = page_->view()->colormap();
    shown.labels = result->labels;
    shown.title = atlasSubject(result->layer, result->head);
    shown.pooling = poolingName();
    canvas_->setAtlas(std::move(shown));
    requestOverview();
    requestRegion();
    return true;
}

bool AtlasCanvas::active() const {
    return canvas_ && atlas_ && canvas_->showsAtlas() &&
           canvas_->atlas().tokens == atlas_->tokens();
}

QString AtlasCanvas::poolingName() const {
    return page_->view()->pooling() == analysis::TilePooling::Max ? QStringLiteral("max")
                                                                  : QStringLiteral("mean");
}

AtlasTileRequest AtlasCanvas::requestFor(const analysis::AtlasRegion& region) const {
    return {atlas_, region, analysis::AttentionAtlas::tileFor(region, kAtlasCellsPerSide),
            page_->view()->pooling(), page_->view()->colormap()};
}

void AtlasCanvas::requestOverview() {
    overviewLoader_->request(requestFor({0, atlas_->tokens(), 0, atlas_->tokens()}));
}

// As the Atlas tab asks: the region in view, widened to its tile grid (alignedToTiles).
void AtlasCanvas::requestRegion() {
    const render::CanvasWindow::Region view = canvas_->visibleRegion();
    if (view.q1 <= view.q0 || view.k1 <= view.k0) return; // the map is out of the window
    AtlasTileRequest request = requestFor({view.q0, view.q1, view.k0, view.k1});
    request.region = alignedToTiles(request.region, request.tile, atlas_->tokens());
    if (loader_->newest() && loader_->newest()->sameAs(request)) return;
    loader_->request(request);
}

render::CanvasTiles canvasTilesOf(const AtlasPicture& picture) {
    const analysis::AtlasTiles& t = picture.tiles;
    render::CanvasTiles tiles;
    tiles.row0 = t.region.q0;
    tiles.col0 = t.region.k0;
    tiles.tile = t.tile;
    tiles.rows = int(t.rows);
    tiles.cols = int(t.cols);
    tiles.values = t.values;
    tiles.low = float(picture.colorBar.low);
    tiles.high = float(picture.colorBar.high);
    return tiles;
}
} // namespace headlight::app
