#include "atlas_view.h"

#include "atlas_export.h"
#include "figures/mask_outline.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace headlight::app {
namespace {

constexpr double kMinSpan = 8.0;        // tokens across the map at the deepest zoom
constexpr double kLabelBand = 110.0;    // query labels left of the map
constexpr double kKeyBand = 84.0;       // key labels (or ticks and the axis title) under it
constexpr double kStripHeight = 14.0;   // the column sums, over the map
constexpr double kProfileWidth = 230.0; // the row profile beside the map
constexpr double kProfileHeight = 150.0;
constexpr double kProfileTitle = 40.0;       // two lines over the profile beside the map
constexpr double kUnderProfileHeight = 64.0; // the row profile under the map's key labels
constexpr double kUnderProfileTitle = 20.0;
constexpr double kProfileEnds = 20.0;   // the first and last key in view, under the profile
constexpr double kBarDrop = 10.0;       // the colour bar's top label clears the strip's maximum
constexpr double kCentredSpan = 24.0;   // tokens in view after centreOn: labelled cells
constexpr double kGap = 8.0;
constexpr int kDragSlop = 4;             // pixels a press may move and still be a click
constexpr double kMinTickSpacing = 70.0; // pixels between position ticks

QFont pixelFont(int pixels, bool bold = false) {
    QFont font;
    font.setPixelSize(pixels);
    font.setBold(bold);
    return font;
}

// 1, 2, 5, 10, 20, 50… tokens: the smallest step at least `minimum` tokens.
int64_t niceStep(double minimum) {
    for (int64_t decade = 1;; decade *= 10)
        for (const int64_t step : {decade, 2 * decade, 5 * decade})
            if (double(step) >= minimum) return step;
}
} // namespace

AtlasView::AtlasView(QWidget* parent)
    : QWidget(parent)
    , loader_(new AtlasTileLoader(this))
    , overviewLoader_(new AtlasTileLoader(this)) {
    setObjectName(QStringLiteral("atlasView"));
    setFocusPolicy(Qt::StrongFocus);
    setMinimumSize(320, 240); // as the figure view: the window fits a 1366 × 768 screen
    setAutoFillBackground(false);
    setMouseTracking(true); // the hover read-out
    connect(loader_, &AtlasTileLoader::loaded, this, &AtlasView::onPicture);
    connect(overviewLoader_, &AtlasTileLoader::loaded, this,
            [this](std::shared_ptr<const AtlasPicture> picture) {
                overview_ = std::move(picture);
                if (!detail_) detail_ = overview_;
                update();
            });
}

void AtlasView::setAtlas(std::shared_ptr<const analysis::AttentionAtlas> atlas,
                         QStringList labels) {
    atlas_ = std::move(atlas);
    labels_ = std::move(labels);
    message_.clear();
    overview_.reset();
    detail_.reset();
    query_ = markedKey_ = -1;
    row_.clear();
    requestOverview();
    fit();
}

void AtlasView::clear(const QString& message) {
    atlas_.reset();
    overview_.reset();
    detail_.reset();
    row_.clear();
    query_ = markedKey_ = -1;
    message_ = message;
    update();
}

void AtlasView::setPooling(analysis::TilePooling pooling) {
    if (pooling == pooling_) return;
    pooling_ = pooling;
    requestOverview();
    requestTiles();
}

void AtlasView::setColormap(render::Colormap map) {
    if (map == colormap_) return;
    colormap_ = map;
    requestOverview();
    requestTiles();
}

void AtlasView::setOverlay(bool on) {
    if (on == overlay_) return;
    overlay_ = on;
    requestTiles();
    update();
}

void AtlasView::selectQuery(int64_t query) {
    query_ = atlas_ && query >= 0 && query < atlas_->tokens() ? query : -1;
    // Why here and not in paint: one exact row costs a pass over T keys, done once per click.
    row_ = query_ >= 0 ? atlas_->row(query_) : std::vector<float>{};
    update();
}

void AtlasView::centreOn(int64_t query, int64_t key) {
    if (!atlas_) return;
    markedKey_ = key;
    selectQuery(query);
    centreQ_ = double(query) + 0.5;
    centreK_ = double(key) + 0.5;
    span_ = std::min(span_, kCentredSpan);
    viewChanged();
}

void AtlasView::fit() {
    const double tokens = atlas_ ? double(atlas_->tokens()) : 1.0;
    span_ = tokens;
    centreQ_ = centreK_ = tokens / 2.0;
    viewChanged();
}

void AtlasView::zoomBy(double factor) {
    span_ /= factor;
    viewChanged();
}

void AtlasView::panBy(double queries, double keys) {
    centreQ_ += queries;
    centreK_ += keys;
    viewChanged();
}

void AtlasView::zoomAbout(double factor, QPointF anchor) {
    const QRectF map = areas().map;
    const double q = top() + (anchor.y() - map.top()) * span_ / map.height();
    const double k = left() + (anchor.x() - map.left()) * span_ / map.width();
    span_ /= factor;
    const double scale = 1.0 / factor;
    centreQ_ = q + (centreQ_ - q) * scale;
    centreK_ = k + (centreK_ - k) * scale;
    viewChanged();
}

analysis::AtlasRegion AtlasView::visibleRegion() const {
    const int64_t tokens = atlas_ ? atlas_->tokens() : 0;
    const auto clampToken = [tokens](double t) {
        return std::clamp<int64_t>(int64_t(std::floor(t)), 0, tokens);
    };
    const auto clampEnd = [tokens](double t) {
        return std::clamp<int64_t>(int64_t(std::ceil(t)), 0, tokens);
    };
    return {clampToken(top()), clampEnd(top() + span_), clampToken(left()),
            clampEnd(left() + span_)};
}

void AtlasView::viewChanged() {
    const double tokens = atlas_ ? double(atlas_->tokens()) : 1.0;
    span_ = std::clamp(span_, std::min(kMinSpan, tokens), tokens);
    centreQ_ = std::clamp(centreQ_, span_ / 2.0, tokens - span_ / 2.0);
    centreK_ = std::clamp(centreK_, span_ / 2.0, tokens - span_ / 2.0);
    update();
    requestTiles();
}

void AtlasView::requestTiles() {
    if (!atlas_) return;
    const analysis::AtlasRegion visible = visibleRegion();
    const int64_t tile = analysis::AttentionAtlas::tileFor(visible, kAtlasCellsPerSide);
    const analysis::AtlasRegion region = alignedToTiles(visible, tile, atlas_->tokens());
    const AtlasTileRequest request{atlas_, region, tile, pooling_, colormap_, overlay_};
    if (loader_->newest() && loader_->newest()->sameAs(request)) return;
    loader_->request(request);
}

void AtlasView::requestOverview() {
    if (!atlas_) return;
    const int64_t tokens = atlas_->tokens();
    const analysis::AtlasRegion whole{0, tokens, 0, tokens};
    overviewLoader_->request({atlas_, whole,
                              analysis::AttentionAtlas::tileFor(whole, kAtlasCellsPerSide),
                              pooling_, colormap_});
}

void AtlasView::onPicture(std::shared_ptr<const AtlasPicture> picture) {
    detail_ = std::move(picture);
    update();
    Q_EMIT pictureShown();
}

bool AtlasView::pictureCoversView() const {
    if (!detail_ || detail_->pooling != pooling_) return false;
    const analysis::AtlasRegion& shown = detail_->tiles.region;
    const analysis::AtlasRegion view = visibleRegion();
    return shown.q0 <= view.q0 && view.q1 <= shown.q1 && shown.k0 <= view.k0 && view.k1 <= shown.k1;
}

// [SECTION] geometry

AtlasView::Areas AtlasView::areas() const {
    const QFont tick = pixelFont(14);
    const double barWidth = render::colorBarWidth(tick) + 12.0;
    const double mapTop = 12.0 + kStripHeight + 4.0;
    const double wide = std::max(40.0, width() - kLabelBand - barWidth - kGap);
    const double tall = std::max(40.0, height() - mapTop - kKeyBand - 4.0);
    // Why not always square: on a 768-pixel screen the height left would make the map a
    // thumbnail; cells may stretch up to 2:1 to use the width.
    const auto fitted = [](double across, double down) {
        across = std::min(across, 2.0 * down);
        return QSizeF(across, std::min(down, across));
    };
    // The row profile goes beside the map or under its key labels, whichever leaves the map the
    // larger: beside where width is to spare (a short screen), under where it is not.
    const QSizeF beside = fitted(std::max(40.0, wide - 2.0 * kGap - kProfileWidth), tall);
    const QSizeF under = fitted(
        wide, std::max(40.0, tall - kUnderProfileTitle - kUnderProfileHeight - kProfileEnds));
    const bool besides = beside.width() * beside.height() >= under.width() * under.height();
    const QSizeF size = besides ? beside : under;
    Areas a;
    a.map = QRectF(QPointF(kLabelBand, mapTop), size);
    a.strip = QRectF(a.map.left(), 12.0, size.width(), kStripHeight);
    a.colorBar =
        QRectF(a.map.right() + kGap, a.map.top() + kBarDrop, barWidth, size.height() - kBarDrop);
    if (besides) {
        a.profile = QRectF(
            a.colorBar.right() + 2.0 * kGap, a.map.top() + kProfileTitle, kProfileWidth,
            std::min(kProfileHeight, std::max(40.0, size.height() - kProfileTitle - kProfileEnds)));
        a.profileTitle = QRectF(a.profile.left(), a.map.top(), kProfileWidth, kProfileTitle - 2.0);
    } else {
        a.profile = QRectF(a.map.left(), a.map.bottom() + kKeyBand + kUnderProfileTitle,
                           size.width(), kUnderProfileHeight);
        a.profileTitle =
            QRectF(a.map.left(), a.map.bottom() + kKeyBand, size.width(), kUnderProfileTitle - 2.0);
    }
    return a;
}

QRectF AtlasView::tokenRect(double q0, double q1, double k0, double k1, const QRectF& map) const {
    const double perKey = map.width() / span_, perQuery = map.height() / span_;
    return QRectF(map.left() + (k0 - left()) * perKey, map.top() + (q0 - top()) * perQuery,
                  (k1 - k0) * perKey, (q1 - q0) * perQuery);
}

QRectF AtlasView::cellRect(int64_t query, int64_t key) const {
    return tokenRect(double(query), double(query + 1), double(key), double(key + 1), areas().map);
}

// [SECTION] painting

void AtlasView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.fillRect(rect(), render::style::kPage);
    const Areas a = areas();
    if (!atlas_) {
        painter.setPen(render::style::kMutedInk);
        painter.setFont(pixelFont(18));
        painter.drawText(rect().adjusted(20, 20, -20, -20), Qt::AlignCenter | Qt::TextWordWrap,
                         message_);
        return;
    }
    painter.save();
    painter.setClipRect(a.map.intersected(
        tokenRect(0, double(atlas_->tokens()), 0, double(atlas_->tokens()), a.map)));
    if (overview_ && overview_ != detail_) paintPicture(painter, *overview_, a.map);
    if (detail_) paintPicture(painter, *detail_, a.map);
    if (overlay_ && detail_) paintOutline(painter, *detail_, a.map);
    paintMarks(painter, a.map);
    painter.restore();
    painter.setPen(render::style::kMutedInk);
    painter.drawRect(a.map);
    const bool exact = pictureCoversView() && detail_->tiles.tile == 1 &&
                       std::min(a.map.width(), a.map.height()) / span_ >=
                           render::fontHeight(pixelFont(13)) + 1.0;
    if (exact)
        paintTokenLabels(painter, a.map);
    else
        paintPositionTicks(painter, a.map);
    if (detail_) render::paintColorBar(painter, a.colorBar, detail_->colorBar, pixelFont(14));
    paintColumnSums(painter, a.strip);
    paintRowProfile(painter, a.profile, a.profileTitle);
}

void AtlasView::paintPicture(QPainter& painter, const AtlasPicture& picture,
                             const QRectF& map) const {
    const auto& t = picture.tiles;
    const auto& r = t.region;
    // The image's last tiles may be partial (at the map's edge): the clip cuts what overhangs.
    const QRectF target = tokenRect(double(r.q0), double(r.q0 + t.rows * t.tile), double(r.k0),
                                    double(r.k0 + t.cols * t.tile), map);
    painter.drawImage(target, picture.image);
}

void AtlasView::paintOutline(QPainter& painter, const AtlasPicture& picture,
                             const QRectF& map) const {
    if (picture.outline.empty()) return;
    const auto& t = picture.tiles;
    const auto& r = t.region;
    // Why only the map's part: paintMaskOutline clips to the cells it is given, and a picture
    // aligned to the tile grid may reach past the map.
    const QRectF cells = tokenRect(double(r.q0), double(r.q0 + t.rows * t.tile), double(r.k0),
                                   double(r.k0 + t.cols * t.tile), map)
                             .intersected(map);
    const double perKey = span_ / map.width(), perQuery = span_ / map.height();
    const QRectF extent(left() + (cells.left() - map.left()) * perKey,
                        top() + (cells.top() - map.top()) * perQuery, cells.width() * perKey,
                        cells.height() * perQuery);
    render::paintMaskOutline(painter, picture.outline, extent, cells);
}

void AtlasView::paintMarks(QPainter& painter, const QRectF& map) const {
    const double perToken = std::min(map.width(), map.height()) / span_;
    painter.setBrush(Qt::NoBrush);
    if (query_ >= 0) {
        QRectF row =
            tokenRect(double(query_), double(query_ + 1), 0, double(atlas_->tokens()), map);
        if (row.height() < 3.0) row.adjust(0, -1.5, 0, 1.5);
        painter.setPen(QPen(render::style::kAccent, 2.0));
        painter.drawRect(row);
    }
    if (markedKey_ >= 0 && query_ >= 0 && perToken >= 4.0) {
        painter.setPen(QPen(Qt::white, 3.0));
        painter.drawRect(cellRect(query_, markedKey_));
        painter.setPen(QPen(render::style::kAccent, 1.5));
        painter.drawRect(cellRect(query_, markedKey_));
    }
}

void AtlasView::paintTokenLabels(QPainter& painter, const QRectF& map) const {
    const analysis::AtlasRegion r = visibleRegion();
    QStringList rows, cols;
    for (int64_t q = r.q0; q < r.q1; ++q)
        rows << labels_.value(int(q));
    for (int64_t k = r.k0; k < r.k1; ++k)
        cols << labels_.value(int(k));
    const QFont font = pixelFont(13);
    const QRectF plot = tokenRect(double(r.q0), double(r.q1), double(r.k0), double(r.k1), map);
    painter.save();
    painter.setClipRect(QRectF(0, map.top(), map.left(), map.height()));
    render::paintRowLabels(painter, plot, map.left() - 4.0, rows, int(query_ - r.q0), font);
    painter.setClipRect(QRectF(map.left(), map.bottom(), map.width(), kKeyBand));
    const double band = render::columnLabelsHeight(cols, font, true, kKeyBand - 8.0);
    render::paintColumnLabels(painter, plot.adjusted(0, 0, 0, map.bottom() - plot.bottom()), band,
                              cols, int(markedKey_ - r.k0), font);
    painter.restore();
}

void AtlasView::paintPositionTicks(QPainter& painter, const QRectF& map) const {
    const double perToken = map.width() / span_, perRow = map.height() / span_;
    const int64_t step = niceStep(kMinTickSpacing / std::min(perToken, perRow));
    const QFont font = pixelFont(14);
    painter.setFont(font);
    painter.setPen(render::style::kInk);
    const int64_t first = int64_t(std::ceil(std::max(0.0, left()) / double(step))) * step;
    for (int64_t t = first; double(t) <= left() + span_; t += step) {
        const double x = map.left() + (double(t) - left()) * perToken;
        painter.drawLine(QPointF(x, map.bottom()), QPointF(x, map.bottom() + 5));
        painter.drawText(QRectF(x - 40, map.bottom() + 6, 80, 20), Qt::AlignHCenter,
                         QString::number(t));
    }
    const int64_t firstRow = int64_t(std::ceil(std::max(0.0, top()) / double(step))) * step;
    for (int64_t t = firstRow; double(t) <= top() + span_; t += step) {
        const double y = map.top() + (double(t) - top()) * perRow;
        painter.drawLine(QPointF(map.left() - 5, y), QPointF(map.left(), y));
        painter.drawText(QRectF(0, y - 10, map.left() - 8, 20), Qt::AlignRight | Qt::AlignVCenter,
                         QString::number(t));
    }
    painter.setFont(pixelFont(15, true));
    painter.drawText(QRectF(map.left(), map.bottom() + 30, map.width(), 22), Qt::AlignHCenter,
                     tr("Key position (attended to)"));
    painter.save();
    painter.translate(18, map.center().y());
    painter.rotate(-90);
    painter.drawText(QRectF(-map.height() / 2, -12, map.height(), 24), Qt::AlignCenter,
                     tr("Query position"));
    painter.restore();
}

std::vector<float> AtlasView::perColumn(const std::vector<float>& values,
                                        const QRectF& area) const {
    std::vector<float> columns(std::size_t(std::max(1.0, area.width())), 0.0f);
    const analysis::AtlasRegion r = visibleRegion();
    const double perToken = area.width() / span_;
    for (int64_t k = r.k0; k < r.k1 && k < int64_t(values.size()); ++k) {
        const double from = (double(k) - left()) * perToken;
        const auto first = std::size_t(std::clamp(from, 0.0, double(columns.size() - 1)));
        const auto last = std::size_t(
            std::clamp(from + perToken - 1.0, double(first), double(columns.size() - 1)));
        for (std::size_t x = first; x <= last; ++x)
            columns[x] = std::max(columns[x], values[std::size_t(k)]);
    }
    return columns;
}

void AtlasView::paintColumnSums(QPainter& painter, const QRectF& strip) const {
    const std::vector<float> columns = perColumn(atlas_->columnSums(), strip);
    const float largest = std::max(*std::max_element(columns.begin(), columns.end()), 1e-6f);
    for (std::size_t x = 0; x < columns.size(); ++x) {
        const QColor color = render::colorAt(colormap_, double(columns[x] / largest));
        painter.fillRect(QRectF(strip.left() + double(x), strip.top(), 1.0, strip.height()), color);
    }
    painter.setPen(render::style::kMutedInk);
    painter.drawRect(strip);
    painter.setFont(pixelFont(13));
    painter.setPen(render::style::kInk);
    painter.drawText(QRectF(0, strip.top(), strip.left() - 6, strip.height()),
                     Qt::AlignRight | Qt::AlignVCenter, tr("Received"));
    painter.drawText(QRectF(strip.right() + 6, strip.top() - 2, 200, strip.height() + 4),
                     Qt::AlignLeft | Qt::AlignVCenter,
                     tr("max %1").arg(double(largest), 0, 'g', 3));
}

void AtlasView::paintRowProfile(QPainter& painter, const QRectF& profile,
                                const QRectF& title) const {
    painter.setPen(render::style::kGrid);
    painter.drawRect(profile);
    painter.setFont(pixelFont(13));
    painter.setPen(render::style::kInk);
    if (row_.empty()) {
        painter.drawText(title, Qt::AlignLeft | Qt::AlignBottom | Qt::TextWordWrap,
                         tr("Row profile: click a query row to see its attention"));
        return;
    }
    const std::vector<float> columns = perColumn(row_, profile);
    const float largest = std::max(*std::max_element(columns.begin(), columns.end()), 1e-6f);
    QPolygonF line;
    for (std::size_t x = 0; x < columns.size(); ++x)
        line << QPointF(profile.left() + double(x) + 0.5,
                        profile.bottom() - double(columns[x] / largest) * (profile.height() - 4.0));
    painter.setPen(QPen(render::style::kAccent, 1.5));
    painter.drawPolyline(line);
    painter.setPen(render::style::kInk);
    painter.drawText(title, Qt::AlignLeft | Qt::AlignBottom | Qt::TextWordWrap,
                     tr("Row of query #%1 “%2” over the keys in view (max %3)")
                         .arg(query_)
                         .arg(labels_.value(int(query_)))
                         .arg(double(largest), 0, 'g', 3));
    const analysis::AtlasRegion r = visibleRegion();
    const QRectF under(profile.left(), profile.bottom() + 2.0, profile.width(), kProfileEnds - 2.0);
    painter.drawText(under, Qt::AlignLeft | Qt::AlignTop, QString::number(r.k0));
    painter.drawText(under, Qt::AlignRight | Qt::AlignTop, QString::number(r.k1 - 1));
}

QString AtlasView::readoutAt(QPointF position) const {
    const QRectF map = areas().map;
    if (!atlas_ || !map.contains(position)) return {};
    const auto query =
        int64_t(std::floor(top() + (position.y() - map.top()) * span_ / map.height()));
    const auto key =
        int64_t(std::floor(left() + (position.x() - map.left()) * span_ / map.width()));
    const auto covers = [query, key](const std::shared_ptr<const AtlasPicture>& p) {
        const analysis::AtlasRegion& r = p ? p->tiles.region : analysis::AtlasRegion{};
        return r.q0 <= query && query < r.q1 && r.k0 <= key && key < r.k1;
    };
    const AtlasPicture* picture = covers(detail_)     ? detail_.get()
                                  : covers(overview_) ? overview_.get()
                                                      : nullptr;
    if (!picture) return {};
    const analysis::AtlasTiles& t = picture->tiles;
    const int64_t row = (query - t.region.q0) / t.tile, col = (key - t.region.k0) / t.tile;
    const auto at = std::size_t(row * t.cols + col);
    const int64_t q0 = t.region.q0 + row * t.tile, k0 = t.region.k0 + col * t.tile;
    QString text =
        t.tile == 1
            ? tr("Query #%1 “%2”, key #%3 “%4”: weight %5")
                  .arg(query)
                  .arg(labels_.value(int(query)))
                  .arg(key)
                  .arg(double(t.values[at]), 0, 'g', 4)
            : tr("Queries %1–%2 × keys %3–%4: %5 weight %6")
                  .arg(q0)
                  .arg(std::min(q0 + t.tile, t.region.q1) - 1)
                  .arg(k0)
                  .arg(std::min(k0 + t.tile, t.region.k1) - 1)
                  .arg(picture->pooling == analysis::TilePooling::Max ? tr("max") : tr("mean"))
                  .arg(double(t.values[at]), 0, 'g', 4);
    if (picture->masked) {
        const analysis::MaskOverlayTiles& m = *picture->masked;
        const double mass = m.mass[at];
        text += tr("\nThe mask allows %1% of its cells · %2")
                    .arg(double(m.allowedShare[at]) * 100.0, 0, 'f', 1)
                    .arg(outsideMaskText(mass > 0.0 ? m.outsideMass[at] / mass : 0.0));
    }
    return text;
}

// [SECTION] input

void AtlasView::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return;
    pressed_ = event->position().toPoint();
    pressedQ_ = centreQ_;
    pressedK_ = centreK_;
    dragging_ = false;
}

void AtlasView::mouseMoveEvent(QMouseEvent* event) {
    if (!(event->buttons() & Qt::LeftButton)) {
        Q_EMIT readoutChanged(readoutAt(event->position()));
        return;
    }
    const QPoint delta = event->position().toPoint() - pressed_;
    if (delta.manhattanLength() > kDragSlop) dragging_ = true;
    if (!dragging_) return;
    const QRectF map = areas().map;
    centreQ_ = pressedQ_ - delta.y() * span_ / map.height();
    centreK_ = pressedK_ - delta.x() * span_ / map.width();
    viewChanged();
}

void AtlasView::mouseReleaseEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton || dragging_ || !atlas_) return;
    const QRectF map = areas().map;
    if (!map.contains(event->position())) return;
    const auto query =
        int64_t(std::floor(top() + (event->position().y() - map.top()) * span_ / map.height()));
    if (query < 0 || query >= atlas_->tokens()) return;
    markedKey_ = -1;
    selectQuery(query);
    Q_EMIT querySelected(query);
}

void AtlasView::leaveEvent(QEvent* event) {
    QWidget::leaveEvent(event);
    Q_EMIT readoutChanged({});
}

void AtlasView::wheelEvent(QWheelEvent* event) {
    const double steps = event->angleDelta().y() / 120.0;
    if (steps != 0.0) zoomAbout(std::pow(1.25, steps), event->position());
    event->accept();
}

void AtlasView::keyPressEvent(QKeyEvent* event) {
    const double step = span_ / 8.0;
    switch (event->key()) {
    case Qt::Key_Left:
        panBy(0, -step);
        break;
    case Qt::Key_Right:
        panBy(0, step);
        break;
    case Qt::Key_Up:
        panBy(-step, 0);
        break;
    case Qt::Key_Down:
        panBy(step, 0);
        break;
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomBy(2.0);
        break;
    case Qt::Key_Minus:
        zoomBy(0.5);
        break;
    case Qt::Key_Home:
        fit();
        break;
    default:
        QWidget::keyPressEvent(event);
    }
}

void AtlasView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    viewChanged();
}
} // namespace headlight::app
