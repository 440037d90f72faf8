// The main window under the offscreen platform (no Vulkan surface there): it still opens, says
// (in the canvas tab) why the canvas is missing, names the compute device and backend, and the
// Compute menu switches the backend; it opens no larger than the screen's available area.
#include "backend/cpu/cpu_gemm.h"
#include "golden.h"
#include "io/checkpoint.h"
#include "main_window.h"
#include "model/memory_budget.h"
#include "window_size.h"

#include <QAction>
#include <QLabel>
#include <QMenuBar>
#include <QScreen>
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

    // 1440 × 900 on a large screen; on a 1366 × 768 one (a laptop or projector) the window and
    // its title bar fit, and so does what the window's layout needs.
    void opensNoLargerThanTheScreen() {
        QCOMPARE(app::defaultWindowSize(QSize(2560, 1400)), QSize(1440, 900));
        const QSize laptop = app::defaultWindowSize(QSize(1366, 740)); // 768 less a 28 px panel
        QCOMPARE(laptop, QSize(1350, 692));
        QVERIFY(QSize(1366, 740).expandedTo(laptop + app::kWindowFrameAllowance) ==
                QSize(1366, 740));
        const QScreen* screen = QGuiApplication::primaryScreen();
        QVERIFY(screen);
        app::MainWindow window({});
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        // Why expandedTo: the offscreen test screen is smaller than the window's layout needs.
        QCOMPARE(window.size(), app::defaultWindowSize(screen).expandedTo(window.minimumSizeHint()));
        // What the layout needs fits the laptop's default size, so there it is not enlarged.
        QVERIFY2(laptop.expandedTo(window.minimumSizeHint()) == laptop,
                 qPrintable(QStringLiteral("the layout needs %1 × %2")
                                .arg(window.minimumSizeHint().width())
                                .arg(window.minimumSizeHint().height())));
    }

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

    // A long pass shows its memory plan before it runs; a pass whose plan does not fit the
    // memory available is refused before it runs, with the plan's numbers in a dialog.
    void longPassesShowTheirMemoryPlanAndRefuseWhenItDoesNotFit() {
        app::MainWindow window({});
        QSignalSpy loaded(&window.session(), &app::ModelSession::loaded);
        const QString folder = test::goldenRoot() + "/llama";
        window.openCheckpoint(folder);
        QVERIFY(loaded.wait(20000));
        app::ForwardRunner& runner = window.workspace()->runner();
        QSignalSpy planned(&runner, &app::ForwardRunner::planned);
        QSignalSpy shown(window.workspace(), &app::Workspace::resultShown);
        window.workspace()->setText(QString("a ").repeated(600));
        QVERIFY(planned.wait(20000));
        QVERIFY2(planned.first().first().toString().startsWith("peak "),
                 qPrintable(planned.first().first().toString()));
        QVERIFY(shown.wait(20000) || shown.count() > 0);
        QVERIFY(!window.errorDialog());

        // With nothing free, even a short pass would not fit beside the weights already held.
        const double held = loadBytes(weightBytes(io::Checkpoint(folder.toStdString()),
                                                  loadModelConfig(folder.toStdString())),
                                      true);
        qputenv("HEADLIGHT_MEMORY_LIMIT_MB", "0");
        QSignalSpy refused(&runner, &app::ForwardRunner::refusedForMemory);
        window.workspace()->setText("the cat sat on the mat");
        const bool wasRefused = refused.wait(20000);
        qunsetenv("HEADLIGHT_MEMORY_LIMIT_MB");
        QVERIFY(wasRefused);
        QVERIFY(window.errorDialog() && window.errorDialog()->isVisible());
        QCOMPARE(window.errorDialog()->windowTitle(), QString("Not enough memory"));
        const QString detail = window.errorDialog()->informativeText();
        QVERIFY2(
            detail.startsWith("not enough memory for this pass: peak ") &&
                detail.contains(" of " + QString::fromStdString(formatBytes(held)) + " available"),
            qPrintable(detail));
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
        const QString gemm = QString::fromStdString(cpu::gemmLibrary()).section(' ', 0, 0);
        QAction* cpu = findAction(window.menuBar(), "Compute", "CPU (" + gemm + ")");
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
