#pragma once
// Pools the Atlas view's visible region into tiles off the GUI thread and colours them into an
// image, so that painting only scales an image that is ready. One region is pooled at a time; a
// request made while one runs replaces any waiting one (the newest wins), and a result that is
// no longer the newest request is dropped. With the mask overlay asked for, the loader also
// works out the region's mask outline and each tile's mass outside the mask (exact, a pass over
// the region's rows), so that painting and the hover read-out only read them. Why in a second
// step, the picture delivered first without them and then again with them: that pass costs as
// much as recomputing the region, and pan and zoom should not wait for it.

#include "analysis/atlas_mask_overlay.h"
#include "analysis/attention_atlas.h"
#include "figures/figure_style.h"

#include <QFutureWatcher>
#include <QImage>
#include <QObject>
#include <QPolygonF>
#include <memory>
#include <optional>
#include <vector>

namespace headlight::app {

// A region's tiles, one pixel per tile, and the colour scale they were coloured with.
struct AtlasPicture {
    analysis::AtlasTiles tiles;
    analysis::TilePooling pooling = analysis::TilePooling::Mean;
    render::ColorBar colorBar;
    QImage image; // tiles.cols × tiles.rows
    // With the overlay: per tile the mask's share (same tiles), and the outline in token
    // coordinates (x a key, y a query) over tiles.region.
    std::optional<analysis::MaskOverlayTiles> masked;
    std::vector<QPolygonF> outline;
    quint64 serial = 0;
};

struct AtlasTileRequest {
    std::shared_ptr<const analysis::AttentionAtlas> atlas;
    analysis::AtlasRegion region;
    int64_t tile = 1;
    analysis::TilePooling pooling = analysis::TilePooling::Mean;
    render::Colormap map = render::Colormap::Viridis;
    bool overlay = false; // the mask overlay too
    bool sameAs(const AtlasTileRequest& other) const;
};

// `region` widened to the grid of `tile`-token tiles, within the map of `tokens`. Why the views ask
// for aligned regions: the cached level then pools them without a pass over the map, and a
// picture's last tile is partial only at the map's edge.
analysis::AtlasRegion alignedToTiles(const analysis::AtlasRegion& region, int64_t tile,
                                     int64_t tokens);

// The picture of a request, on the calling thread; with the overlay asked for, without its numbers
// (addMaskOverlay adds them).
AtlasPicture pictureOf(const AtlasTileRequest& request);
// The mask overlay of `picture`'s region (its outline and per tile the mask's numbers).
void addMaskOverlay(AtlasPicture& picture, const AtlasTileRequest& request);

class AtlasTileLoader : public QObject {
    Q_OBJECT
public:
    explicit AtlasTileLoader(QObject* parent = nullptr);
    ~AtlasTileLoader() override;

    void request(const AtlasTileRequest& request);
    // The newest request, made or running: a view asks again only for another region.
    const std::optional<AtlasTileRequest>& newest() const { return newest_; }
    bool busy() const;

Q_SIGNALS:
    void loaded(std::shared_ptr<const AtlasPicture> picture);

private:
    void launch();
    // Runs `make` off the GUI thread; its picture is stamped with `serial`.
    template <typename Make> void run(quint64 serial, Make make);
    void collect();

    QFutureWatcher<std::shared_ptr<const AtlasPicture>>* watcher_;
    std::optional<AtlasTileRequest> newest_;
    quint64 requested_ = 0, launched_ = 0;
};
} // namespace headlight::app
