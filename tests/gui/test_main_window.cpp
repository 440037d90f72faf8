// The main window under the offscreen platform (no Vulkan surface there): it still opens, says
// why the canvas is missing, names the compute device and backend, and the Compute menu switches
// the backend.
#include <QAction>
#include <QLabel>
#include <QMenuBar>
#include <QStatusBar>
#include <QTest>

#include "main_window.h"

using namespace headlight;

namespace {
QAction* findAction(QMenuBar* bar, const QString& menuTitle, const QString& text) {
    for (QAction* menu : bar->actions()) {
        if (menu->text().remove('&') != menuTitle) continue;
        for (QAction* action : menu->menu()->actions())
            if (action->text().remove('&') == text) return action;
    }
    return nullptr;
}

QString statusText(const app::MainWindow& window) {
    QString text;
    for (QLabel* label : window.statusBar()->findChildren<QLabel*>()) text += label->text();
    return text;
}
} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void opensWithoutCanvasAndSaysWhy() {
        app::MainWindow window({});
        window.show();
        QVERIFY(!window.canvas());
        QVERIFY(window.canvasProblem().contains("Vulkan canvas is unavailable"));
        auto* label = qobject_cast<QLabel*>(window.centralWidget());
        QVERIFY(label);
        QCOMPARE(label->text(), window.canvasProblem());
    }

    void statusBarNamesDeviceAndBackend() {
        app::MainWindow window({});
        QCOMPARE(window.backendChoice().kind, BackendKind::Cpu);
        const QString status = statusText(window);
        QVERIFY2(status.contains("llvmpipe"), qPrintable(status));
        QVERIFY2(status.contains("the only Vulkan device is a CPU"), qPrintable(status));
    }

    void computeMenuSwitchesBackend() {
        app::MainWindow window({});
        QAction* vulkan = findAction(window.menuBar(), "Compute", "Vulkan compute");
        QAction* cpu = findAction(window.menuBar(), "Compute", "CPU (Eigen)");
        QVERIFY(vulkan && cpu);
        vulkan->trigger();
        QCOMPARE(window.backendChoice().kind, BackendKind::Vulkan);
        QVERIFY(statusText(window).contains("vulkan backend (chosen)"));
        cpu->trigger();
        QCOMPARE(window.backendChoice().kind, BackendKind::Cpu);
        QVERIFY(findAction(window.menuBar(), "File", "Quit"));
    }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
