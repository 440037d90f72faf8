// The Vulkan canvas' attention map under Xvfb: a 2,048 × 2,048 map drawn by the canvas pipeline
// shows each cell in its colour-table colour where MapView places it, zooming about the cursor
// keeps the cell under it, a drag pans by the mouse's travel, the hover read-out names the cell,
// a click selects the query row, and in the main window the canvas follows the selected head of
// a real forward pass. Frame times while panning are printed (measured, never asserted).
#include "canvas/canvas_window.h"
#include "colormap.h"
#include "main_window.h"
#include "zoo_models.h"

#include <QElapsedTimer>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTest>
#include <QWheelEvent>
#include <algorithm>

using namespace headlight;
using render::CanvasMap;
using render::CanvasWindow;

namespace {

constexpr int kTokens = 2048, kBlock = 256;

// Blocks of 256 × 256 cells alternating 0 and 1, except cell (5, 7), which is 0.5.
CanvasMap checkerboard() {
    CanvasMap map;
    map.rows = map.cols = kTokens;
    map.values.resize(std::size_t(kTokens) * kTokens);
    for (int i = 0; i < kTokens; ++i)
        for (int j = 0; j < kTokens; ++j)
            map.values[std::size_t(i) * kTokens + j] = float((i / kBlock + j / kBlock) % 2);
    map.values[5 * kTokens + 7] = 0.5f;
    for (int i = 0; i < kTokens; ++i)
        map.rowLabels << QStringLiteral("t%1").arg(i);
    map.colLabels = map.rowLabels;
    map.title = QStringLiteral("checkerboard");
    return map;
}

QImage frameOf(CanvasWindow* canvas) {
    QImage frame = canvas->grab();
    if (canvas->colorFormat() == VK_FORMAT_B8G8R8A8_UNORM) frame = frame.rgbSwapped();
    return frame.convertToFormat(QImage::Format_RGB32);
}

bool near(QRgb a, QColor b, int tolerance = 3) {
    return std::abs(qRed(a) - b.red()) <= tolerance &&
           std::abs(qGreen(a) - b.green()) <= tolerance &&
           std::abs(qBlue(a) - b.blue()) <= tolerance;
}

// The framebuffer pixel at the centre of cell (row, col).
QPoint centreOf(const CanvasWindow* canvas, int row, int col) {
    const QPointF corner = canvas->view().cellCorner(row, col);
    const double half = canvas->view().cellSize() / 2.0, dpr = canvas->devicePixelRatio();
    return QPoint(int((corner.x() + half) * dpr), int((corner.y() + half) * dpr));
}

void waitFrames(CanvasWindow* canvas, quint64 count) {
    const quint64 target = canvas->framesRendered() + count;
    canvas->requestUpdate();
    QTRY_VERIFY_WITH_TIMEOUT(canvas->framesRendered() >= target, 20000);
}

void wheel(CanvasWindow* canvas, QPointF at, int notches) {
    QWheelEvent event(at, canvas->mapToGlobal(at), {}, {0, 120 * notches}, Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(canvas, &event);
}

void mouse(CanvasWindow* canvas, QEvent::Type type, QPointF at, Qt::MouseButton button) {
    QMouseEvent event(type, at, canvas->mapToGlobal(at), button,
                      type == QEvent::MouseButtonRelease ? Qt::NoButton : Qt::MouseButtons(button),
                      Qt::NoModifier);
    QCoreApplication::sendEvent(canvas, &event);
}
} // namespace

class TestSmokeCanvasMap : public QObject {
    Q_OBJECT
    std::unique_ptr<app::MainWindow> window_;
    CanvasWindow* canvas_ = nullptr;

private Q_SLOTS:
    void initTestCase() {
        window_ = std::make_unique<app::MainWindow>(app::LaunchOptions{});
        window_->resize(1440, 900); // the canvas size the cell positions assume, on any screen
        window_->workspace()->showCanvas();
        window_->show();
        canvas_ = window_->canvas();
        QVERIFY2(canvas_, qPrintable(window_->canvasProblem()));
        waitFrames(canvas_, 2);
    }

    void cellsHaveTheirColourWhereTheViewPutsThem() {
        canvas_->setMap(checkerboard());
        waitFrames(canvas_, 2);
        const QImage frame = frameOf(canvas_);
        const QColor low = render::colorAt(render::Colormap::Viridis, 0.0);
        const QColor high = render::colorAt(render::Colormap::Viridis, 1.0);
        for (const auto& [row, col, colour] :
             {std::tuple{100, 100, low}, std::tuple{100, 300, high}, std::tuple{300, 100, high},
              std::tuple{2000, 2000, low}, std::tuple{1800, 200, high}}) {
            const QPoint at = centreOf(canvas_, row, col);
            QVERIFY2(near(frame.pixel(at), colour),
                     qPrintable(QString("cell %1,%2 at %3,%4: %5")
                                    .arg(row)
                                    .arg(col)
                                    .arg(at.x())
                                    .arg(at.y())
                                    .arg(QColor(frame.pixel(at)).name())));
        }
        // Outside the map: the canvas background.
        QVERIFY(near(frame.pixel(frame.width() - 3, frame.height() / 2), QColor(28, 31, 36)));
        frame.save(QString(HEADLIGHT_TEST_OUTPUT_DIR) + "/canvas_map_fitted.png");
    }

    void zoomKeepsTheCellUnderTheCursor() {
        canvas_->fitMap();
        const QPointF at =
            canvas_->view().cellCorner(5, 7) + QPointF(0.3, 0.3) * canvas_->view().cellSize();
        const double before = canvas_->view().cellSize();
        wheel(canvas_, at, 30); // 1.25^30 ≈ 808×: cell (5, 7) becomes large
        QVERIFY(std::abs(canvas_->view().cellSize() / before - std::pow(1.25, 30)) <
                1e-6 * std::pow(1.25, 30));
        const render::MapCell cell = canvas_->view().cellAt(at, kTokens, kTokens);
        QCOMPARE(cell.row, 5);
        QCOMPARE(cell.col, 7);
        waitFrames(canvas_, 2);
        const QImage frame = frameOf(canvas_);
        QVERIFY(near(frame.pixel(centreOf(canvas_, 5, 7)),
                     render::colorAt(render::Colormap::Viridis, 0.5), 4));
        QVERIFY(near(frame.pixel(centreOf(canvas_, 5, 8)),
                     render::colorAt(render::Colormap::Viridis, 0.0)));
        frame.save(QString(HEADLIGHT_TEST_OUTPUT_DIR) + "/canvas_map_zoomed.png");
    }

    void hoverReadsOutAndClickSelectsTheRow() {
        const QPointF at = canvas_->view().cellCorner(5, 7) + QPointF(2.0, 2.0);
        mouse(canvas_, QEvent::MouseMove, at, Qt::NoButton);
        QCOMPARE(canvas_->hoveredCell().row, 5);
        QCOMPARE(canvas_->readout(), QString("query “t5” (5) → key “t7” (7): 0.5000"));
        QSignalSpy selected(canvas_, &CanvasWindow::querySelected);
        mouse(canvas_, QEvent::MouseButtonPress, at, Qt::LeftButton);
        mouse(canvas_, QEvent::MouseButtonRelease, at, Qt::LeftButton);
        QCOMPARE(selected.count(), 1);
        QCOMPARE(selected.first().first().toInt(), 5);
    }

    void dragPansAndFramesAreTimed() {
        const QPointF origin = canvas_->view().origin();
        QPointF at(300, 300);
        mouse(canvas_, QEvent::MouseButtonPress, at, Qt::LeftButton);
        std::vector<double> frameMs;
        for (int step = 0; step < 20; ++step) {
            at += QPointF(-7, -5);
            mouse(canvas_, QEvent::MouseMove, at, Qt::LeftButton);
            waitFrames(canvas_, 1);
            frameMs.push_back(canvas_->lastFrameMs());
        }
        mouse(canvas_, QEvent::MouseButtonRelease, at, Qt::LeftButton);
        const QPointF moved = canvas_->view().origin() - origin;
        QVERIFY(std::abs(moved.x() + 140) < 1e-9 && std::abs(moved.y() + 100) < 1e-9);
        std::sort(frameMs.begin(), frameMs.end());
        qInfo("2048 × 2048 map, panning: frame CPU time p50 %.2f ms, p95 %.2f ms (%d frames)",
              frameMs[frameMs.size() / 2], frameMs[frameMs.size() * 95 / 100], int(frameMs.size()));
    }

    void followsTheSelectedHeadOfARealPass() {
        window_->openCheckpoint(test::zooModelsRoot() + "/pre_ln");
        QTRY_VERIFY_WITH_TIMEOUT(window_->session().current(), 30000);
        window_->workspace()->setText("The hacker found the bug.");
        QTRY_VERIFY_WITH_TIMEOUT(canvas_->map().rows == 25, 30000);
        QVERIFY(canvas_->map().title.startsWith("Layer 0 · head 0"));
        QCOMPARE(canvas_->map().rowLabels.first(), QString("T"));
        const float first = canvas_->map().at(24, 3);
        window_->workspace()->selectHead(3, 2);
        QVERIFY(canvas_->map().title.startsWith("Layer 3 · head 2"));
        QVERIFY(canvas_->map().at(24, 3) != first);
        QVERIFY(canvas_->hudLines().join(' ').contains("Forward pass:"));
        waitFrames(canvas_, 2);
        frameOf(canvas_).save(QString(HEADLIGHT_TEST_OUTPUT_DIR) + "/canvas_map_model.png");
    }

    void cleanupTestCase() { window_.reset(); }
};

HEADLIGHT_TEST_MAIN(TestSmokeCanvasMap)
#include "test_smoke_canvas_map.moc"
