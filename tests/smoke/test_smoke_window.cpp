// A real window under Xvfb: the main window hosts the Vulkan canvas in its workspace's last tab,
// frames are rendered, and a grabbed frame shows the canvas background with the Dear ImGui HUD
// drawn over it (bottom left).
#include "canvas/canvas_window.h"
#include "main_window.h"

#include <QLabel>
#include <QStatusBar>
#include <QTest>

using namespace headlight;

namespace {
constexpr QRgb kBackground = qRgb(28, 31, 36); // CanvasRenderer's clear colour, 8-bit

bool near(QRgb a, QRgb b, int tolerance = 3) {
    return std::abs(qRed(a) - qRed(b)) <= tolerance &&
           std::abs(qGreen(a) - qGreen(b)) <= tolerance &&
           std::abs(qBlue(a) - qBlue(b)) <= tolerance;
}
} // namespace

class TestSmokeWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void canvasRendersBackgroundAndHud() {
        app::MainWindow window({});
        window.workspace()->showCanvas(); // the canvas is the workspace's last tab
        window.show();
        QVERIFY2(window.canvas(), qPrintable(window.canvasProblem()));
        QTRY_VERIFY_WITH_TIMEOUT(window.canvas()->framesRendered() >= 3, 20000);

        QImage frame = window.canvas()->grab();
        QVERIFY(!frame.isNull());
        if (window.canvas()->colorFormat() == VK_FORMAT_B8G8R8A8_UNORM) frame = frame.rgbSwapped();
        frame = frame.convertToFormat(QImage::Format_RGB32);
        QVERIFY(frame.width() > 400 && frame.height() > 300);

        // Away from the HUD the canvas is its clear colour.
        QVERIFY(near(frame.pixel(frame.width() - 5, frame.height() - 5), kBackground));
        QVERIFY(near(frame.pixel(frame.width() / 2, 20), kBackground));

        // The HUD panel at the bottom-left differs from the background and holds bright text.
        int panel = 0, bright = 0;
        for (int y = frame.height() - 70; y < frame.height() - 14; ++y)
            for (int x = 14; x < 250; ++x) {
                const QRgb p = frame.pixel(x, y);
                panel += !near(p, kBackground, 2);
                bright += qGray(p) > 180;
            }
        QVERIFY2(panel > 5000, qPrintable(QString("panel pixels: %1").arg(panel)));
        QVERIFY2(bright > 100, qPrintable(QString("text pixels: %1").arg(bright)));

        const QStringList hud = window.canvas()->hudLines();
        QVERIFY(hud.join(' ').contains("llvmpipe"));
        QVERIFY(window.canvas()->lastFrameMs() > 0.0);
        frame.save(QString(HEADLIGHT_TEST_OUTPUT_DIR) + "/smoke_canvas.png");
    }
};

HEADLIGHT_TEST_MAIN(TestSmokeWindow)
#include "test_smoke_window.moc"
