// The main window under the offscreen platform (no Vulkan surface there): it still opens, says
// (in the canvas tab) why the canvas is missing, names the compute device and backend, and the
// Compute menu switches the backend.
#include "golden.h"
#include "main_window.h"

#include <QAction>
#include <QLabel>
#include <QMenuBar>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

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
    for (QLabel* label : window.statusBar()->findChildren<QLabel*>())
        text += label->text() + label->toolTip();
    return text;
}
} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void opensACheckpointOnAWorkerThread() {
        app::MainWindow window({});
        QSignalSpy loaded(&window.session(), &app::ModelSession::loaded);
        window.openCheckpoint(test::goldenRoot() + "/bert");
        QVERIFY(loaded.wait(20000));
        QVERIFY2(statusText(window).contains(
                     "bert  ·  BERT (bert) · 2 layers × 4 heads · hidden 32 · cpu"),
                 qPrintable(statusText(window)));
        QVERIFY(window.windowTitle().contains("bert"));
        QVERIFY(window.session().current()->tokenizer != nullptr);
        QVERIFY(findAction(window.menuBar(), "File", "Open checkpoint folder…"));
    }

    void badCheckpointGetsADialogAndKeepsThePreviousModel() {
        app::MainWindow window({});
        QSignalSpy loaded(&window.session(), &app::ModelSession::loaded);
        window.openCheckpoint(test::goldenRoot() + "/gpt2");
        QVERIFY(loaded.wait(20000));

        QTemporaryDir pickles;
        QFile bin(pickles.filePath("pytorch_model.bin"));
        QVERIFY(bin.open(QIODevice::WriteOnly));
        bin.write("\x80\x02}q\x00.");
        bin.close();
        QFile config(pickles.filePath("config.json"));
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write(
            R"({"model_type": "bert", "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1,
                        "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 8,
                        "type_vocab_size": 2})");
        config.close();
        QSignalSpy failed(&window.session(), &app::ModelSession::failed);
        window.openCheckpoint(pickles.path());
        QVERIFY(failed.wait(20000));
        QVERIFY(window.errorDialog());
        QVERIFY(window.errorDialog()->isVisible());
        QCOMPARE(window.errorDialog()->windowTitle(), QString("Cannot open checkpoint"));
        QVERIFY2(window.errorDialog()->informativeText().contains("re-save with a current torch"),
                 qPrintable(window.errorDialog()->informativeText()));
        QCOMPARE(window.session().current()->model->spec().architecture, Architecture::Gpt2);
        QVERIFY(statusText(window).contains("gpt2"));
    }

    void opensWithoutCanvasAndSaysWhy() {
        app::MainWindow window({});
        window.show();
        QVERIFY(!window.canvas());
        QVERIFY(window.canvasProblem().contains("Vulkan canvas is unavailable"));
        // The canvas tab of the workspace says why instead.
        QCOMPARE(window.centralWidget(), window.workspace());
        auto* label = qobject_cast<QLabel*>(window.workspace()->canvasPage());
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
        QVERIFY(statusText(window).contains("Vulkan backend · Vulkan device: llvmpipe"));
        QVERIFY(statusText(window).contains("vulkan backend (chosen)"));
        cpu->trigger();
        QCOMPARE(window.backendChoice().kind, BackendKind::Cpu);
        QVERIFY(findAction(window.menuBar(), "File", "Quit"));
    }
};

HEADLIGHT_TEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
