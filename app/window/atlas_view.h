#pragma once
// The Atlas view's map: one head's (or a layer's mean) attention at any text length, drawn from
// the tiles of an AttentionAtlas (core/analysis/attention_atlas.h), with the attention each key
// receives (column sums) as a strip over the map, the selected query's row profile as a line
// beside it or under it (whichever leaves the map larger: on a short screen the height is what
// the map lacks), both over the keys in view, and a colour bar.
//
// Painting never computes attention: it scales the pictures the tile loader made (a whole-map
// overview under the picture of the region last in view). Each pan or zoom repaints at once from
// those and asks the loader for the region now in view, pooled so that it has at most
// kAtlasCellsPerSide tiles a side; at one token a tile the cells are exact and, once they fit,
// carry the token labels. The map is painted in layers (pictures, then the mask outline, then
// marks, then labels). With the mask overlay on, the picture also carries the outline of the mask
// the map obeys (a variant's rows of keys, else the model's rule) and each tile's mass outside
// it; hovering a tile tells its numbers (readoutAt).
//
//   drag / arrow keys   pan        wheel / + / −   zoom about the cursor or the centre
//   Home                fit        click           select the query row under the cursor

#include "analysis/attention_atlas.h"
#include "atlas_tile_loader.h"

#include <QStringList>
#include <QWidget>
#include <memory>
#include <vector>

namespace headlight::app {

class AtlasView : public QWidget {
    Q_OBJECT
public:
    explicit AtlasView(QWidget* parent = nullptr);

    // A new atlas (its token labels [T]): the whole map in view, no query selected.
    void setAtlas(std::shared_ptr<const analysis::AttentionAtlas> atlas, QStringList labels);
    // No atlas: the message in the middle ("Running the model…", a reason).
    void clear(const QString& message);
    const analysis::AttentionAtlas* atlas() const { return atlas_.get(); }
    const QStringList& labels() const { return labels_; }
    const QString& message() const { return message_; } // what clear() said

    void setPooling(analysis::TilePooling pooling);
    analysis::TilePooling pooling() const { return pooling_; }
    void setColormap(render::Colormap map);
    render::Colormap colormap() const { return colormap_; }
    // The mask overlay: the outline over the map and each tile's mass outside the mask.
    void setOverlay(bool on);
    bool overlay() const { return overlay_; }
    // What the tile under `position` (widget coordinates) holds: its tokens, its weight and, with
    // the overlay, the mask's share of its cells and of its mass; empty off the map.
    QString readoutAt(QPointF position) const;

    // The query whose row profile is drawn (its row outlined), −1 for none.
    void selectQuery(int64_t query);
    int64_t selectedQuery() const { return query_; }
    const std::vector<float>& rowProfile() const { return row_; } // [T], empty without a query
    // Centres the view on the cell (query, key), zoomed in to exact cells, and outlines it.
    void centreOn(int64_t query, int64_t key);

    void fit();
    void zoomBy(double factor); // > 1 zooms in, about the centre
    void panBy(double queries, double keys);
    // The tokens in view: whole tokens, clamped to the map.
    analysis::AtlasRegion visibleRegion() const;
    double tokensInView() const { return span_; }
    // The picture of the region in view, or the overview until that arrives; null before either.
    const AtlasPicture* picture() const { return detail_.get(); }
    // Whether that picture covers the whole region in view with the pooling asked for (until the
    // refinement arrives, part of the view shows a coarser or shifted picture).
    bool pictureCoversView() const;
    AtlasTileLoader& loader() { return *loader_; }
    // Where a token cell lies in widget coordinates (for tests and overlays).
    QRectF cellRect(int64_t query, int64_t key) const;

Q_SIGNALS:
    void querySelected(int64_t query);
    void pictureShown();                      // a new picture of the region in view is painted
    void readoutChanged(const QString& text); // the pointer moved over another tile, or off

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    struct Areas {
        QRectF map, strip, profile, profileTitle, colorBar;
    };
    Areas areas() const;
    QRectF tokenRect(double q0, double q1, double k0, double k1, const QRectF& map) const;
    double top() const { return centreQ_ - span_ / 2.0; }
    double left() const { return centreK_ - span_ / 2.0; }
    void viewChanged(); // clamps, repaints and asks for the tiles now in view
    void requestTiles();
    void requestOverview();
    void onPicture(std::shared_ptr<const AtlasPicture> picture);
    void zoomAbout(double factor, QPointF anchor);

    void paintPicture(QPainter& painter, const AtlasPicture& picture, const QRectF& map) const;
    void paintOutline(QPainter& painter, const AtlasPicture& picture, const QRectF& map) const;
    void paintMarks(QPainter& painter, const QRectF& map) const;
    void paintTokenLabels(QPainter& painter, const QRectF& map) const;
    void paintPositionTicks(QPainter& painter, const QRectF& map) const;
    void paintColumnSums(QPainter& painter, const QRectF& strip) const;
    void paintRowProfile(QPainter& painter, const QRectF& profile, const QRectF& title) const;
    // Per pixel column of `area`, the largest of `values` over the keys it covers.
    std::vector<float> perColumn(const std::vector<float>& values, const QRectF& area) const;

    std::shared_ptr<const analysis::AttentionAtlas> atlas_;
    QStringList labels_;
    QString message_;
    analysis::TilePooling pooling_ = analysis::TilePooling::Mean;
    render::Colormap colormap_ = render::Colormap::Viridis;
    bool overlay_ = false;
    double centreQ_ = 0.0, centreK_ = 0.0, span_ = 1.0; // tokens
    int64_t query_ = -1, markedKey_ = -1;
    std::vector<float> row_;
    AtlasTileLoader* loader_;
    AtlasTileLoader* overviewLoader_;
    std::shared_ptr<const AtlasPicture> overview_, detail_;
    QPoint pressed_;
    double pressedQ_ = 0.0, pressedK_ = 0.0;
    bool dragging_ = false;
};
} // namespace headlight::app
