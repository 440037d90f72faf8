// Device faults fall back to the CPU backend with a visible message and the same results: no
// Vulkan driver at all (a real loader finding no ICD), pipeline creation failing, the device lost
// mid-run, a batch that never finishes (a hung shader, cut off by HEADLIGHT_VULKAN_TIMEOUT_S), a
// batch given up while the device still runs it (nothing it uses may be freed) and
// device memory running out (forced with HEADLIGHT_VULKAN_FAULT and a tiny
// HEADLIGHT_VULKAN_MEMORY_BUDGET_MB), from the CLI and in the window.
#include <QLabel>
#include <QProcessEnvironment>
#include <QStatusBar>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "backend/vulkan/vk_error.h"
#include "cli_runner.h"
#include "golden.h"
#include "main_window.h"

using namespace headlight;

namespace {

struct Outcome {
    test::CliResult run;
    QByteArray dump;
};

Outcome inspect(const QTemporaryDir& dir, const QString& name, const QString& backend,
                const QList<QPair<QByteArray, QByteArray>>& environment) {
    for (const auto& [key, value] : environment) qputenv(key.constData(), value);
    const QString dump = dir.filePath(name + ".safetensors");
    Outcome outcome;
    outcome.run = test::runHeadlight({"inspect", "--model", test::goldenRoot() + "/bert", "--text",
                                      "Café naïve résumé, 3.14!", "--backend", backend, "--dump", dump});
    for (const auto& [key, value] : environment) qunsetenv(key.constData());
    QFile file(dump);
    if (file.open(QIODevice::ReadOnly)) outcome.dump = file.readAll();
    return outcome;
}
} // namespace

class TestDeviceFaults : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QByteArray cpuDump_;

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        const Outcome cpu = inspect(dir_, "cpu", "cpu", {});
        QVERIFY2(cpu.run.exitCode == 0, qPrintable(cpu.run.err));
        cpuDump_ = cpu.dump;
        QVERIFY(!cpuDump_.isEmpty());
    }

    void faultFallsBackWithMessageAndSameResults_data() {
        QTest::addColumn<QByteArray>("variable");
        QTest::addColumn<QByteArray>("value");
        QTest::addColumn<QString>("message");
        QTest::newRow("no driver") << QByteArray("VK_DRIVER_FILES") << QByteArray("/nonexistent/icd.json")
                                   << "Vulkan requested but no Vulkan device (no Vulkan driver is installed";
        QTest::newRow("pipeline creation fails")
            << QByteArray("HEADLIGHT_VULKAN_FAULT") << QByteArray("pipeline")
            << "Vulkan failed (creating pipeline";
        QTest::newRow("device lost mid-run") << QByteArray("HEADLIGHT_VULKAN_FAULT") << QByteArray("device-lost")
                                             << "Vulkan failed (vkQueueSubmit failed: VK_ERROR_DEVICE_LOST";
        QTest::newRow("device hangs") << QByteArray("HEADLIGHT_VULKAN_FAULT") << QByteArray("hang")
                                      << "dispatches within 1 s (a hung shader or driver; HEADLIGHT_VULKAN_TIMEOUT_S sets the limit)";
        // A batch given up while the device still runs it (as the timeout gives up on a slow
        // one): nothing it uses may be freed under it, or lavapipe's threads crash the process.
        QTest::newRow("batch abandoned while running")
            << QByteArray("HEADLIGHT_VULKAN_FAULT") << QByteArray("abandon")
            << "dispatches was abandoned while running (forced by HEADLIGHT_VULKAN_FAULT=abandon)";
        QTest::newRow("out of device memory")
            << QByteArray("HEADLIGHT_VULKAN_MEMORY_BUDGET_MB") << QByteArray("0")
            << "would exceed the device memory budget of 0 MiB); using the CPU backend";
    }

    void faultFallsBackWithMessageAndSameResults() {
        QFETCH(QByteArray, variable);
        QFETCH(QByteArray, value);
        QFETCH(QString, message);
        QList<QPair<QByteArray, QByteArray>> environment{{variable, value}};
        if (variable == "VK_DRIVER_FILES") environment.append({"VK_ICD_FILENAMES", value});
        if (value == "hang") environment.append({QByteArray("HEADLIGHT_VULKAN_TIMEOUT_S"), QByteArray("1")});
        const Outcome faulty = inspect(dir_, QString::fromLatin1(QTest::currentDataTag()).replace(' ', '_'),
                                       "vulkan", environment);
        QVERIFY2(faulty.run.exitCode == 0, qPrintable(faulty.run.err));
        QVERIFY2(faulty.run.err.contains(message), qPrintable(faulty.run.err));
        QCOMPARE(faulty.run.err.trimmed().count('\n'), 0);
        QCOMPARE(faulty.dump, cpuDump_); // the CPU pass that replaced it wrote identical bytes
    }

    void unknownFaultNameIsRefused() {
        qputenv("HEADLIGHT_VULKAN_FAULT", "meteor");
        QVERIFY_THROWS_EXCEPTION(vk::VulkanError, vk::DeviceFaults::fromEnvironment());
        qunsetenv("HEADLIGHT_VULKAN_FAULT");
    }

    void windowFallsBackAndSaysWhy() {
        qputenv("HEADLIGHT_VULKAN_MEMORY_BUDGET_MB", "0");
        app::MainWindow window({BackendKind::Vulkan, {}});
        QSignalSpy loaded(&window.session(), &app::ModelSession::loaded);
        window.openCheckpoint(test::goldenRoot() + "/bert");
        QVERIFY(loaded.wait(30000));
        qunsetenv("HEADLIGHT_VULKAN_MEMORY_BUDGET_MB");
        const app::LoadedModel* model = window.session().current();
        QCOMPARE(model->backend->kind(), BackendKind::Cpu);
        QVERIFY2(model->backendNote.contains("device memory budget of 0 MiB"), qPrintable(model->backendNote));
        QString status;
        for (QLabel* label : window.statusBar()->findChildren<QLabel*>()) status += label->text();
        QVERIFY2(status.contains("using the CPU backend"), qPrintable(status));
    }
};

HEADLIGHT_TEST_MAIN(TestDeviceFaults)
#include "test_device_faults.moc"
