// The Atlas on the Vulkan canvas under Xvfb (lavapipe), on the zoo's RoPE model at T ≈ 600,
// against the dense map of a normal pass: "Open on canvas" on the Atlas tab draws its atlas there;
// the overview's tiles are the dense map pooled (4-token tiles) and each tile's pixels its colour
// on the picture's colour scale; zooming about a cell keeps it under the cursor and the refined
// picture of the region in view arrives with one token a tile (the dense weights, their colours);
// a drag moves the region by the mouse's travel and its tiles follow; the hover read-out names the
// cell and its weight; max pooling redraws the tiles as the dense map's maxima and another colour
// map recolours them; another tab and the canvas tab again show the selected head's map.
// Screenshots go to test-output/.
#include "atlas_canvas.h"
#include "atlas_figure.h"
#include "atlas_page.h"
#include "canvas/canvas_window.h"
#include "colormap.h"
#include "compare.h"
#include "main_window.h"

#include <QComboBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>
#include <QWheelEvent>

using namespace headlight;
using render::CanvasWindow;

namespace {

constexpr int kAtlasWaitMs = 120000; // a generous ceiling for a loaded CI machine
constexpr int kLayer = 1, kHead = 2;

// About 600 characters of prose: the RoPE zoo model reads bytes, so about 600 tokens.
QString atlasText() {
    const QString sentence =
        QStringLiteral("The animal didn't cross the street because it was too tired. ");
    QString text;
    while (text.size() < 600)
        text += sentence;
    return text.left(600);
}

// The dense reference: a normal pass keeping every map, head kHead of layer kLayer as [T, T].
Tensor denseHeadMap(const std::shared_ptr<const app::LoadedModel>& model, const QString& text) {
    const auto result = app::runForwardPass(model, text, {});
    const Tensor& all = result->attention; // [L, H, T, T]
    const int64_t heads = all.dim(1), t = all.dim(2);
    Tensor map({t, t});
    const float* from = all.data() + (kLayer * heads + kHead) * t * t;
    std::copy(from, from + t * t, map.data());
    return map;
}

QImage grabCanvas(CanvasWindow* canvas) {
    QImage frame = canvas->grab();
    if (canvas->colorFormat() == VK_FORMAT_B8G8R8A8_UNORM) frame = frame.rgbSwapped();
    return frame.convertToFormat(QImage::Format_RGB32);
}

// Within a few steps of the canvas' 256-entry colour table.
bool closeTo(QRgb a, QColor b) {
    constexpr int kTolerance = 4;
    return std::abs(qRed(a) - b.red()) <= kTolerance &&
           std::abs(qGreen(a) - b.green()) <= kTolerance &&
           std::abs(qBlue(a) - b.blue()) <= kTolerance;
}

void renderFrames(CanvasWindow* canvas, quint64 count) {
    const quint64 target = canvas->framesRendered() + count;
    canvas->requestUpdate();
    QTRY_VERIFY_WITH_TIMEOUT(canvas->framesRendered() >= target, 20000);
}

// Until the canvas' detail picture covers the region in view at `tile` tokens a tile.
void waitForDetail(CanvasWindow* canvas, app::AtlasCanvas* atlas, int64_t tile) {
    QTRY_VERIFY_WITH_TIMEOUT(canvas->detailCoversView() && canvas->atlas().detail.tile == tile &&
                                 !atlas->loader().busy(),
                             kAtlasWaitMs);
    renderFrames(canvas, 2);
}

// The framebuffer pixel at the centre of the tokens [row, row + tile) × [col, col + tile).
QPoint tileCentre(const CanvasWindow* canvas, int64_t row, int64_t col, int64_t tile) {
    const QPointF corner = canvas->view().cellCorner(int(row), int(col));
    const double half = canvas->view().cellSize() * double(tile) / 2.0;
    const double dpr = canvas->devicePixelRatio();
    return QPoint(int((corner.x() + half) * dpr), int((corner.y() + half) * dpr));
}

// The largest difference between the canvas' tiles and the expected ones (test::maxAbsDiff: +inf
// when the grids differ, either holds a NaN or an infinity, or they are empty).
double largestDifference(const render::CanvasTiles& shown, const analysis::AtlasTiles& expected) {
    if (shown.rows != expected.rows || shown.cols != expected.cols) return test::kNotComparable;
    return test::maxAbsDiff(shown.values, expected.values);
}

// The dense map pooled as the canvas' detail picture is: same region and tile.
analysis::AtlasTiles densePooled(const Tensor& dense, const render::CanvasTiles& shown,
                                 analysis::TilePooling pooling) {
    const int64_t tokens = dense.dim(0);
    const analysis::AtlasRegion region{
        shown.row0, std::min(tokens, shown.row0 + shown.rows * shown.tile), shown.col0,
        std::min(tokens, shown.col0 + shown.cols * shown.tile)};
    return analysis::poolDense(dense, region, shown.tile, pooling);
}

// Every `step`-th tile of the detail picture that lies in the window's upper part (clear of the
// HUD in the lower left and of the token labels' bands) and away from the hover read-out beside
// `pointer` (logical pixels) has the colour of the dense value on the dense tiles' colour scale.
void checkTileColours(CanvasWindow* canvas, const analysis::AtlasTiles& expected, int step,
                      QPointF pointer = {-1000.0, -1000.0},
                      render::Colormap map = render::Colormap::Viridis) {
    const QImage frame = grabCanvas(canvas);
    const double dpr = canvas->devicePixelRatio();
    const QRectF readout(pointer * dpr - QPointF(20.0, 20.0), QSizeF(560.0, 120.0) * dpr);
    // Right of and below the token labels' bands, above the HUD.
    const QRectF clear(QPointF(100.0, 80.0) * dpr, QPointF(frame.width(), frame.height() * 0.6));
    const render::ColorBar bar = app::atlasColorBar(expected.values, expected.tile, map);
    int checked = 0;
    for (int64_t r = 0; r < expected.rows; r += step)
        for (int64_t c = 0; c < expected.cols; c += step) {
            const int64_t q = expected.region.q0 + r * expected.tile;
            const int64_t k = expected.region.k0 + c * expected.tile;
            if (q + expected.tile > expected.region.q1 || k + expected.tile > expected.region.k1)
                continue; // a partial tile at the map's edge
            const QPoint at = tileCentre(canvas, q, k, expected.tile);
            if (!clear.contains(at) || readout.contains(at)) continue;
            const QColor colour =
                render::colorAt(bar.map, render::normalise(expected.at(r, c), bar.low, bar.high));
            QVERIFY2(closeTo(frame.pixel(at), colour),
                     qPrintable(QStringLiteral("tile at token %1, %2 (pixel %3, %4): %5, not %6")
                                    .arg(q)
                                    .arg(k)
                                    .arg(at.x())
                                    .arg(at.y())
                                    .arg(QColor(frame.pixel(at)).name(), colour.name())));
            ++checked;
        }
    QVERIFY2(checked >= 20, qPrintable(QString::number(checked)));
}

void wheelAt(CanvasWindow* canvas, QPointF at, int notches) {
    QWheelEvent event(at, canvas->mapToGlobal(at), {}, {0, 120 * notches}, Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(canvas, &event);
}

void sendMouse(CanvasWindow* canvas, QEvent::Type type, QPointF at, Qt::MouseButton button) {
    QMouseEvent event(type, at, canvas->mapToGlobal(at), button,
                      type == QEvent::MouseButtonRelease ? Qt::NoButton : Qt::MouseButtons(button),
                      Qt::NoModifier);
    QCoreApplication::sendEvent(canvas, &event);
}

void saveFrame(CanvasWindow* canvas, const QString& name) {
    grabCanvas(canvas).save(QStringLiteral(HEADLIGHT_TEST_OUTPUT_DIR "/") + name);
}
} // namespace

class TestSmokeCanvasAtlas : public QObject {
    Q_OBJECT
    std::unique_ptr<app::MainWindow> window_;
    CanvasWindow* canvas_ = nullptr;
    app::AtlasCanvas* atlas_ = nullptr;
    Tensor dense_;
    int64_t tokens_ = 0;

private Q_SLOTS:
    void initTestCase() {
        window_ = std::make_unique<app::MainWindow>(app::LaunchOptions{});
        window_->resize(1440, 900);
        window_->show();
        canvas_ = window_->canvas();
        QVERIFY2(canvas_, qPrintable(window_->canvasProblem()));
        atlas_ = window_->atlasCanvas();
        QSignalSpy loaded(&window_->session(), &app::ModelSession::loaded);
        window_->openCheckpoint(QStringLiteral(HEADLIGHT_SOURCE_DIR "/resources/models/rope"));
        QTRY_VERIFY_WITH_TIMEOUT(!loaded.isEmpty(), kAtlasWaitMs);
        app::Workspace* workspace = window_->workspace();
        workspace->showAtlas();
        workspace->selectHead(kLayer, kHead);
        workspace->setText(atlasText());
        app::AtlasPage* page = workspace->atlasPage();
        QTRY_VERIFY_WITH_TIMEOUT(page->result() && page->result()->text == atlasText() &&
                                     page->canvasButton()->isEnabled(),
                                 kAtlasWaitMs);
        tokens_ = page->result()->tokens;
        dense_ = denseHeadMap(window_->session().shared(), atlasText());
        QCOMPARE(dense_.dim(0), tokens_);
    }

    void openOnCanvasDrawsTheOverview() {
        window_->grab().save(QStringLiteral(HEADLIGHT_TEST_OUTPUT_DIR "/canvas_atlas_tab.png"));
        QTest::mouseClick(window_->workspace()->atlasPage()->canvasButton(), Qt::LeftButton);
        QVERIFY(window_->workspace()->canvasShowsAtlas());
        QVERIFY(canvas_->showsAtlas());
        QCOMPARE(canvas_->atlas().tokens, tokens_);
        QCOMPARE(canvas_->atlas().title, QString("Layer 1, head 2"));
        QCOMPARE(canvas_->atlas().pooling, QString("mean"));
        // The whole map in view: its picture is the overview's, 4-token tiles.
        waitForDetail(canvas_, atlas_, 4);
        const CanvasWindow::Region view = canvas_->visibleRegion();
        QVERIFY(view.q0 == 0 && view.q1 == tokens_ && view.k0 == 0 && view.k1 == tokens_);
        QTRY_VERIFY_WITH_TIMEOUT(!canvas_->atlas().overview.empty(), kAtlasWaitMs);
        const analysis::AtlasTiles expected =
            densePooled(dense_, canvas_->atlas().overview, analysis::TilePooling::Mean);
        QCOMPARE(expected.tile, int64_t(4));
        QVERIFY(largestDifference(canvas_->atlas().overview, expected) < 1e-6f);
        QVERIFY(largestDifference(canvas_->atlas().detail, expected) < 1e-6f);
        checkTileColours(canvas_, expected, 3);
        saveFrame(canvas_, "canvas_atlas_overview.png");
    }

    void zoomRefinesToExactCells() {
        const QPointF at =
            canvas_->view().cellCorner(300, 290) + QPointF(0.5, 0.5) * canvas_->view().cellSize();
        const double before = canvas_->view().cellSize();
        wheelAt(canvas_, at, 14); // 1.25^14 ≈ 23×: about 30 queries by 80 keys in view
        QVERIFY(std::abs(canvas_->view().cellSize() / before - std::pow(1.25, 14)) < 1e-6 * 23.0);
        const render::MapCell cell = canvas_->view().cellAt(at, int(tokens_), int(tokens_));
        QCOMPARE(cell.row, 300);
        QCOMPARE(cell.col, 290);
        const CanvasWindow::Region view = canvas_->visibleRegion();
        const double across = canvas_->width() / canvas_->view().cellSize();
        const double down = canvas_->height() / canvas_->view().cellSize();
        QVERIFY(std::abs(double(view.k1 - view.k0) - across) <= 2.0);
        QVERIFY(std::abs(double(view.q1 - view.q0) - down) <= 2.0);
        QVERIFY(view.q0 <= 300 && 300 < view.q1 && view.k0 <= 290 && 290 < view.k1);
        waitForDetail(canvas_, atlas_, 1);
        const analysis::AtlasTiles expected =
            densePooled(dense_, canvas_->atlas().detail, analysis::TilePooling::Mean);
        QVERIFY(largestDifference(canvas_->atlas().detail, expected) < 1e-6f);
        checkTileColours(canvas_, expected, 2);
        saveFrame(canvas_, "canvas_atlas_exact.png");
    }

    void hoverReadsOutTheWeight() {
        const QPointF at = canvas_->view().cellCorner(300, 290) + QPointF(3.0, 3.0);
        sendMouse(canvas_, QEvent::MouseMove, at, Qt::NoButton);
        const QStringList& labels = window_->workspace()->atlasPage()->result()->labels;
        QCOMPARE(canvas_->readout(),
                 QStringLiteral("query “%1” (300) → key “%2” (290): %3")
                     .arg(labels[300], labels[290])
                     .arg(double(dense_.data()[300 * tokens_ + 290]), 0, 'f', 4));
    }

    void dragMovesTheRegionAndItsTilesFollow() {
        const CanvasWindow::Region before = canvas_->visibleRegion();
        const double cell = canvas_->view().cellSize();
        QPointF at(600, 300);
        sendMouse(canvas_, QEvent::MouseButtonPress, at, Qt::LeftButton);
        for (int step = 0; step < 10; ++step) {
            at += QPointF(-40, -10);
            sendMouse(canvas_, QEvent::MouseMove, at, Qt::LeftButton);
        }
        sendMouse(canvas_, QEvent::MouseButtonRelease, at, Qt::LeftButton);
        // 400 pixels left and 100 up: the region moves right and down by that many tokens.
        const CanvasWindow::Region after = canvas_->visibleRegion();
        QVERIFY(std::abs(double(after.k0 - before.k0) - 400.0 / cell) <= 1.0);
        QVERIFY(std::abs(double(after.q0 - before.q0) - 100.0 / cell) <= 1.0);
        waitForDetail(canvas_, atlas_, 1);
        const analysis::AtlasTiles expected =
            densePooled(dense_, canvas_->atlas().detail, analysis::TilePooling::Mean);
        QVERIFY(canvas_->atlas().detail.col0 <= after.k0);
        QVERIFY(largestDifference(canvas_->atlas().detail, expected) < 1e-6f);
        checkTileColours(canvas_, expected, 2, at);
    }

    void maxPoolingRedrawsTheTiles() {
        QTest::keyClick(canvas_, Qt::Key_Home);
        sendMouse(canvas_, QEvent::MouseMove, QPointF(4, 4), Qt::NoButton); // off the map
        QVERIFY(!canvas_->hoveredCell().valid());
        window_->workspace()->atlasPage()->poolingBox()->setCurrentIndex(1);
        QCOMPARE(canvas_->atlas().pooling, QString("max"));
        QTRY_VERIFY_WITH_TIMEOUT(canvas_->atlas().detail.tile == 4 && canvas_->detailCoversView() &&
                                     !atlas_->loader().busy() && !atlas_->overviewLoader().busy(),
                                 kAtlasWaitMs);
        renderFrames(canvas_, 2);
        const analysis::AtlasTiles expected =
            densePooled(dense_, canvas_->atlas().detail, analysis::TilePooling::Max);
        QVERIFY(largestDifference(canvas_->atlas().detail, expected) < 1e-6f);
        QVERIFY(largestDifference(canvas_->atlas().overview, expected) < 1e-6f);
        checkTileColours(canvas_, expected, 3);
        saveFrame(canvas_, "canvas_atlas_max.png");
    }

    void anotherColourMapRecoloursTheTiles() {
        window_->workspace()->setColormap(render::Colormap::Cividis);
        QCOMPARE(canvas_->atlas().colormap, render::Colormap::Cividis);
        QVERIFY(canvas_->detailCoversView());
        renderFrames(canvas_, 2);
        const analysis::AtlasTiles expected =
            densePooled(dense_, canvas_->atlas().detail, analysis::TilePooling::Max);
        checkTileColours(canvas_, expected, 3, {-1000.0, -1000.0}, render::Colormap::Cividis);
    }

    void theCanvasTabShowsTheMapAgain() {
        app::Workspace* workspace = window_->workspace();
        workspace->setView(app::ViewKind::Heatmap);
        QVERIFY(!workspace->canvasShowsAtlas());
        workspace->showCanvas();
        QVERIFY(!canvas_->showsAtlas());
        QVERIFY(canvas_->atlas().empty());
    }

    void cleanupTestCase() { window_.reset(); }
};

HEADLIGHT_TEST_MAIN(TestSmokeCanvasAtlas)
#include "test_smoke_canvas_atlas.moc"
