// What a desktop asks of Headlight's window: a scene or lesson file dropped on it opens (as a
// double-click does through the .desktop entry's `headlight FILE`), a checkpoint folder dropped
// opens as a model, anything else is refused at the door, and Help ▸ About names the version, the
// build's git revision, the Qt version and the Vulkan device and driver (or why there is none).
#include "about_info.h"
#include "build_info.h"
#include "classroom.h"
#include "golden.h"
#include "main_window.h"
#include "temp_files.h"

#include <QAction>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

using namespace headlight;

namespace {

constexpr int kWaitMs = 60000; // a generous ceiling for a loaded CI machine, not a measurement

// Drags `path` over the window and, when the window accepts it, drops it; says whether it did.
bool dropOn(app::MainWindow& window, const QString& path) {
    QMimeData data;
    data.setUrls({QUrl::fromLocalFile(path)});
    const QPoint centre = window.rect().center();
    QDragEnterEvent enter(centre, Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&window, &enter);
    if (!enter.isAccepted()) return false;
    QDropEvent drop(centre, Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&window, &drop);
    return true;
}

QAction* helpAction(QMenuBar* bar, const QString& text) {
    for (QAction* menu : bar->actions())
        if (menu->text().remove('&') == QLatin1String("Help"))
            for (QAction* action : menu->menu()->actions())
                if (action->text().remove('&') == text) return action;
    return nullptr;
}
} // namespace

class TestDesktopIntegration : public QObject {
    Q_OBJECT
    QTemporaryDir home_;

private Q_SLOTS:
    // Why a home of its own: the windows here open models, which the window remembers in its
    // settings, and ctest runs the other GUI tests, which read those settings, at the same time.
    void initTestCase() {
        qputenv("HOME", home_.path().toUtf8());
        QStandardPaths::setTestModeEnabled(true);
    }

    void aDroppedSceneFileOpensItsScene() {
        test::ScratchDir dir;
        const QString scene = dir.filePath("grid.json");
        test::writeFile(scene, QStringLiteral(R"({"model": "%1", "text": "the cat sat",
                                   "view": "model-grid", "selection": {"layer": 1, "head": 2}})")
                                   .arg(test::goldenRoot() + "/bert")
                                   .toUtf8());
        app::MainWindow window({});
        window.show();
        QVERIFY(dropOn(window, scene));
        QTRY_VERIFY_WITH_TIMEOUT(window.session().current() != nullptr, kWaitMs);
        QCOMPARE(window.session().current()->name(), QStringLiteral("bert"));
        const io::Scenario shown = window.workspace()->scenario();
        QCOMPARE(shown.view, std::string("model-grid"));
        QCOMPARE(shown.text, std::string("the cat sat"));
        QCOMPARE(shown.selection.layer, 1);
        QCOMPARE(shown.selection.head, 2);
    }

    void aDroppedFolderOpensAsAModelAndOtherFilesAreRefused() {
        test::ScratchDir dir;
        const QString text = dir.filePath("notes.txt");
        test::writeFile(text, "not a scene");
        app::MainWindow window({});
        window.show();
        QVERIFY(!dropOn(window, text));
        QSignalSpy loaded(&window.session(), &app::ModelSession::loaded);
        QVERIFY(dropOn(window, test::goldenRoot() + "/bert"));
        QVERIFY(loaded.wait(kWaitMs));
        QCOMPARE(window.session().current()->name(), QStringLiteral("bert"));
    }

    void aboutNamesTheVersionsAndTheComputeDevice() {
        app::MainWindow window({});
        window.show();
        QAction* about = helpAction(window.menuBar(), "About Headlight");
        QVERIFY(about);
        about->trigger();
        auto* dialog = window.findChild<QMessageBox*>("aboutDialog");
        QVERIFY(dialog && dialog->isVisible());
        const QString text = dialog->text();
        QVERIFY2(text.contains("Headlight " HEADLIGHT_VERSION), qPrintable(text));
        QVERIFY2(text.contains("Git revision: " + app::buildRevision()), qPrintable(text));
        QVERIFY(app::buildRevision() != QLatin1String("unknown")); // built from a git checkout
        QVERIFY2(text.contains(QStringLiteral("Qt: %1").arg(qVersion())), qPrintable(text));
        const BackendChoice& choice = window.backendChoice();
        QVERIFY2(choice.device, "the test machine has lavapipe");
        QVERIFY2(text.contains(QString::fromStdString(choice.device->name).toHtmlEscaped()),
                 qPrintable(text));
        QVERIFY2(
            text.contains("driver " +
                          QString::fromStdString(choice.device->driverVersion).toHtmlEscaped()),
            qPrintable(text));
        QVERIFY2(text.contains("Resources: "), qPrintable(text));
        dialog->accept();
    }
};

HEADLIGHT_TEST_MAIN(TestDesktopIntegration)
#include "test_desktop_integration.moc"
