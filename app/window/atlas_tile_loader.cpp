#include "atlas_tile_loader.h"

#include "atlas_export.h"
#include "colormap.h"

#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

namespace headlight::app {

bool AtlasTileRequest::sameAs(const AtlasTileRequest& other) const {
    const auto& a = region;
    const auto& b = other.region;
    return atlas == other.atlas && a.q0 == b.q0 && a.q1 == b.q1 && a.k0 == b.k0 && a.k1 == b.k1 &&
           tile == other.tile && pooling == other.pooling && map == other.map &&
           overlay == other.overlay;
}

analysis::AtlasRegion alignedToTiles(const analysis::AtlasRegion& region, int64_t tile,
                                     int64_t tokens) {
    const auto down = [tile](int64_t t) { return t / tile * tile; };
    const auto up = [tile, tokens](int64_t t) {
        return std::min(tokens, (t + tile - 1) / tile * tile);
    };
    return {down(region.q0), up(region.q1), down(region.k0), up(region.k1)};
}

AtlasPicture pictureOf(const AtlasTileRequest& request) {
    AtlasPicture picture;
    picture.tiles = request.atlas->tiles(request.region, request.tile, request.pooling);
    picture.pooling = request.pooling;
    picture.colorBar = atlasColorBar(picture.tiles.values, picture.tiles.tile, request.map);
    const auto& tiles = picture.tiles;
    picture.image = QImage(int(tiles.cols), int(tiles.rows), QImage::Format_RGB32);
    const render::ColorBar& bar = picture.colorBar;
    for (int64_t row = 0; row < tiles.rows; ++row) {
        auto* line = reinterpret_cast<QRgb*>(picture.image.scanLine(int(row)));
        for (int64_t col = 0; col < tiles.cols; ++col)
            line[col] =
                render::colorAt(bar.map, render::normalise(tiles.at(row, col), bar.low, bar.high))
                    .rgb();
    }
    return picture;
}

void addMaskOverlay(AtlasPicture& picture, const AtlasTileRequest& request) {
    const analysis::AtlasMask mask = analysis::atlasMaskOf(request.atlas->input());
    const analysis::AtlasTiles& tiles = picture.tiles;
    picture.masked = analysis::maskOverlayTiles(*request.atlas, mask, tiles.region, tiles.tile);
    picture.outline = atlasOutline(*request.atlas, mask, tiles.region);
}

AtlasTileLoader::AtlasTileLoader(QObject* parent)
    : QObject(parent)
    , watcher_(new QFutureWatcher<std::shared_ptr<const AtlasPicture>>(this)) {
    connect(watcher_, &QFutureWatcherBase::finished, this, &AtlasTileLoader::collect);
}

AtlasTileLoader::~AtlasTileLoader() {
    watcher_->waitForFinished();
}

void AtlasTileLoader::request(const AtlasTileRequest& request) {
    newest_ = request;
    ++requested_;
    launch();
}

bool AtlasTileLoader::busy() const {
    return watcher_->isRunning();
}

void AtlasTileLoader::launch() {
    if (busy() || launched_ == requested_ || !newest_) return;
    launched_ = requested_;
    run(launched_, [request = *newest_] { return pictureOf(request); });
}

template <typename Make> void AtlasTileLoader::run(quint64 serial, Make make) {
    watcher_->setFuture(QtConcurrent::run([serial, make]() -> std::shared_ptr<const AtlasPicture> {
        auto picture = std::make_shared<AtlasPicture>(make());
        picture->serial = serial;
        return picture;
    }));
}

void AtlasTileLoader::collect() {
    const std::shared_ptr<const AtlasPicture> picture = watcher_->result();
    if (picture->serial != requested_) {
        launch();
        return;
    }
    Q_EMIT loaded(picture);
    if (newest_->overlay && !picture->masked)
        run(picture->serial, [request = *newest_, picture] {
            AtlasPicture withOverlay = *picture;
            addMaskOverlay(withOverlay, request);
            return withOverlay;
        });
}
} // namespace headlight::app
