// Classroom mode: every built-in lesson parses and every one of its scenes renders offscreen with
// real pixels; presentation keys step the lesson, the layer and the head; a saved scene reopens
// as the same state; lesson edits undo; malformed files and missing models get their one-line
// messages; and `headlight export --scene` writes a figure or refuses a bad scene.
#include "classroom.h"
#include "cli_runner.h"
#include "compare_dock.h"
#include "head_roles_dock.h"
#include "lesson_dock.h"
#include "main_window.h"
#include "presentation_window.h"
#include "scene_files.h"
#include "scene_render.h"
#include "variant_dock.h"

#include <QApplication>
#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QListWidget>
#include <QMenuBar>
#include <QMouseEvent>
#include <QSet>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace headlight;

namespace {

app::LaunchOptions cpuOnly() {
    app::LaunchOptions options;
    options.backend = BackendKind::Cpu;
    return options;
}

void writeFile(const QString& path, const QByteArray& bytes) {
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(bytes);
}

QString lessonPath(const QString& prefix) {
    for (const QString& path : app::builtinLessons())
        if (QFileInfo(path).fileName().startsWith(prefix)) return path;
    return {};
}

// The window shows `scene`: its model loaded, its text run, its view and selection set.
bool shows(app::MainWindow& window, const io::Scene& scene) {
    const app::Workspace* workspace = window.workspace();
    const auto model = workspace->sharedModel();
    return !window.findChild<app::Classroom*>()->sceneLoading() && model &&
           QDir(model->folder).absolutePath() == app::resolveSceneModel(scene.model, {}) &&
           workspace->result() && workspace->result()->text == QString::fromStdString(scene.text) &&
           app::viewId(workspace->view()).toStdString() == scene.view &&
           workspace->state().layer == scene.selection.layer &&
           workspace->state().head == scene.selection.head;
}

// The pointer moving over `widget` with no button down (QTest::mouseMove needs a real cursor).
void hover(QWidget* widget, QPoint at) {
    QMouseEvent move(QEvent::MouseMove, at, widget->mapToGlobal(at), Qt::NoButton, Qt::NoButton,
                     Qt::NoModifier);
    QApplication::sendEvent(widget, &move);
}

int distinctColours(const QImage& image) {
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 2)
        for (int x = 0; x < image.width(); x += 2)
            colours.insert(image.pixel(x, y));
    return int(colours.size());
}
// The entries of the menu bar's menu titled `title`, in order, separators as "-".
QStringList menuEntries(app::MainWindow& window, const QString& title) {
    QStringList entries;
    for (QAction* menu : window.menuBar()->actions())
        if (menu->text() == title)
            for (QAction* action : menu->menu()->actions())
                entries << (action->isSeparator() ? QStringLiteral("-") : action->text());
    return entries;
}
} // namespace

class TestClassroom : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void everyBuiltinLessonParsesAndEveryStepRenders() {
        const QStringList lessons = app::builtinLessons();
        QVERIFY(lessons.size() >= 6); // the six of docs/scenes.md, and any added later
        for (const QString& path : lessons) {
            const io::Lesson lesson = app::loadLesson(path);
            QVERIFY2(lesson.steps.size() >= 5 && lesson.steps.size() <= 10, qPrintable(path));
            QVERIFY(!lesson.title.empty() && !lesson.summary.empty());
            int index = 0;
            for (const io::Scene& scene : lesson.steps) {
                const QString where =
                    QStringLiteral("%1 step %2").arg(QFileInfo(path).fileName()).arg(index++);
                QVERIFY2(!scene.caption.empty() && !scene.title.empty(), qPrintable(where));
                app::RenderedScene rendered;
                io::Scenario onCpu = scene;
                onCpu.backend = BackendKind::Cpu;
                try {
                    rendered = app::renderScenario(onCpu, QFileInfo(path).absolutePath(), "");
                } catch (const std::exception& error) {
                    QFAIL(qPrintable(where + ": " + error.what()));
                }
                QImage image(960, 640, QImage::Format_RGB32);
                image.fill(Qt::white);
                QPainter painter(&image);
                render::paintExportPage(painter, image.rect(), rendered.content,
                                        render::captionLine(rendered.caption));
                painter.end();
                // A figure, not a message: many colours from the colour maps and labels.
                QVERIFY2(distinctColours(image) > 40, qPrintable(where));
            }
        }
    }

    // The classroom plugs into the window from above (app/classroom over app/window): its dock
    // tabbed with the variant dock, its entries where the window leaves room for them.
    void attachesItsDockAndMenuEntriesToTheWindow() {
        app::MainWindow window(cpuOnly());
        const QStringList bareFile = menuEntries(window, "&File");
        auto* classroom = new app::Classroom(&window);
        const QList<QDockWidget*> tabbed = window.tabifiedDockWidgets(classroom->dock());
        QCOMPARE(tabbed.size(), 2); // the variant dock and the head table
        QVERIFY(tabbed.contains(window.variantDock()) && tabbed.contains(window.headRolesDock()));
        const QStringList file = menuEntries(window, "&File");
        const QStringList added = {"Open scene or &lesson…", "Built-in l&essons", "Save &scene…",
                                   "Save lesso&n…"};
        QCOMPARE(file.mid(file.indexOf("Open &corpus…") + 2, 4), added);
        QCOMPARE(file.size(), bareFile.size() + 4);
        QCOMPARE(file.mid(file.size() - 2), (QStringList{"-", "&Quit"}));
        const QStringList view = menuEntries(window, "&View");
        const qsizetype lessons = view.indexOf(classroom->dock()->toggleViewAction()->text());
        QVERIFY(lessons > 0);
        QCOMPARE(
            view.mid(lessons - 1, 4),
            (QStringList{window.compareDock()->toggleViewAction()->text(),
                         classroom->dock()->toggleViewAction()->text(),
                         classroom->presentAction()->text(), "Violins over the current &text"}));
    }

    void presentationKeysStepTheLessonLayerAndHead() {
        app::MainWindow window(cpuOnly());
        auto* classroom = new app::Classroom(&window);
        QVERIFY(classroom->openFile(lessonPath("3-")));
        const io::Lesson lesson = classroom->lesson();
        QTRY_VERIFY_WITH_TIMEOUT(shows(window, lesson.steps[0]), 30000);
        classroom->present();
        app::PresentationWindow* presentation = classroom->presentation();
        QVERIFY(presentation && presentation->isVisible());
        QVERIFY(presentation->titleText().contains("1 / 8"));
        QCOMPARE(presentation->captionText(), QString::fromStdString(lesson.steps[0].caption));

        // Right: the next step, with another model and text in the same view.
        QTest::keyClick(presentation, Qt::Key_Right);
        QCOMPARE(classroom->currentStep(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(shows(window, lesson.steps[1]), 30000);
        QVERIFY(lesson.steps[1].model != lesson.steps[0].model &&
                lesson.steps[1].text != lesson.steps[0].text);
        QVERIFY(presentation->titleText().contains("2 / 8"));
        QCOMPARE(presentation->captionText(), QString::fromStdString(lesson.steps[1].caption));

        // PageDown twice from step 3: the same model in another view.
        classroom->goToStep(3);
        QTRY_VERIFY_WITH_TIMEOUT(shows(window, lesson.steps[3]), 30000);
        QTest::keyClick(presentation, Qt::Key_PageDown);
        QCOMPARE(classroom->currentStep(), 4);
        QTRY_VERIFY_WITH_TIMEOUT(shows(window, lesson.steps[4]), 30000);
        QCOMPARE(lesson.steps[3].view, std::string("positions"));
        QCOMPARE(app::viewId(window.workspace()->view()), QString("heatmap"));
        QVERIFY(
            std::holds_alternative<render::HeatmapFigure>(presentation->figureView()->figure()));

        // Down / + / ] step the layer and the head; Left goes back; Esc leaves.
        QTest::keyClick(presentation, Qt::Key_Down);
        QCOMPARE(window.workspace()->state().layer, 1);
        QTest::keyClick(presentation, Qt::Key_Plus);
        QTest::keyClick(presentation, Qt::Key_BracketRight);
        QCOMPARE(window.workspace()->state().head, 2);
        QTest::keyClick(presentation, Qt::Key_BracketLeft);
        QCOMPARE(window.workspace()->state().head, 1);
        const auto* heatmap =
            std::get_if<render::HeatmapFigure>(&presentation->figureView()->figure());
        QVERIFY(heatmap && heatmap->title.contains("Layer 1") && heatmap->title.contains("head 1"));
        QTest::keyClick(presentation, Qt::Key_Left);
        QCOMPARE(classroom->currentStep(), 3);
        QTest::keyClick(presentation, Qt::Key_Escape);
        QVERIFY(!presentation->isVisible());
    }

    void laserHighlightsTheTokenUnderThePointer() {
        app::MainWindow window(cpuOnly());
        auto* classroom = new app::Classroom(&window);
        QVERIFY(classroom->openFile(lessonPath("1-")));
        QTRY_VERIFY_WITH_TIMEOUT(shows(window, classroom->lesson().steps[0]), 30000);
        classroom->present();
        app::PresentationWindow* presentation = classroom->presentation();
        presentation->resize(1400, 900);
        QTRY_VERIFY(presentation->tokenStrip()->chipRect(4).isValid());
        hover(presentation->tokenStrip(), presentation->tokenStrip()->chipRect(4).center());
        QTRY_COMPARE(presentation->figureView()->laser(), 4);
        QCOMPARE(presentation->tokenStrip()->laser(), 4);
        const QImage before = presentation->figureView()->grab().toImage();
        hover(presentation->tokenStrip(), presentation->tokenStrip()->chipRect(9).center());
        QTRY_COMPARE(presentation->figureView()->laser(), 9);
        QVERIFY(presentation->figureView()->grab().toImage() != before);
    }

    void savedSceneReopensAsTheSameState() {
        QTemporaryDir dir;
        const QString lesson = lessonPath("2-");
        io::Scene scene = app::loadLesson(lesson).steps[1]; // Longformer mask, sparsity view
        scene.selection = {2, 3, 5, false};
        scene.colormap = "cividis";
        scene.title.clear(); // a saved scene has a caption; titles belong to lesson steps
        app::saveSceneFile(dir.filePath("longformer.json"), scene);

        app::MainWindow first(cpuOnly());
        auto* firstClassroom = new app::Classroom(&first);
        QVERIFY(firstClassroom->openFile(dir.filePath("longformer.json")));
        QTRY_VERIFY_WITH_TIMEOUT(shows(first, scene), 30000);
        QTRY_COMPARE(first.workspace()->state().query, 5);
        QVERIFY(first.workspace()->variant().mask.has_value());
        QCOMPARE(firstClassroom->caption(), scene.caption); // what presentation mode shows
        QVERIFY(firstClassroom->saveScene(dir.filePath("saved.json"), scene.caption));
        const io::Scene saved = app::loadScene(dir.filePath("saved.json"));
        QVERIFY2(saved == scene, QJsonDocument(io::sceneToJson(saved)).toJson().constData());

        app::MainWindow second(cpuOnly());
        auto* secondClassroom = new app::Classroom(&second);
        QVERIFY(secondClassroom->openFile(dir.filePath("saved.json")));
        QTRY_VERIFY_WITH_TIMEOUT(shows(second, scene), 30000);
        QTRY_COMPARE(second.workspace()->state().query, 5);
        QCOMPARE(secondClassroom->captureScene(scene.caption), scene);
    }

    void lessonEditsUndo() {
        app::MainWindow window(cpuOnly());
        auto* classroom = new app::Classroom(&window);
        QVERIFY(classroom->openFile(lessonPath("4-")));
        const io::Lesson original = classroom->lesson();
        QTRY_VERIFY_WITH_TIMEOUT(shows(window, original.steps[0]), 30000);
        classroom->addCurrentAsStep("Mine", "My caption");
        QCOMPARE(classroom->lesson().steps.size(), original.steps.size() + 1);
        QCOMPARE(classroom->lesson().steps[1].caption, std::string("My caption"));
        QCOMPARE(classroom->dock()->steps()->count(), int(original.steps.size()) + 1);
        classroom->moveStep(1, 1);
        QCOMPARE(classroom->lesson().steps[2].title, std::string("Mine"));
        classroom->removeStep(0);
        QCOMPARE(classroom->lesson().steps[1].title, std::string("Mine"));
        classroom->undoStack()->undo();
        classroom->undoStack()->undo();
        classroom->undoStack()->undo();
        QCOMPARE(classroom->lesson(), original);
        classroom->undoStack()->redo();
        QCOMPARE(classroom->lesson().steps[1].title, std::string("Mine"));
    }

    void malformedLessonAndMissingModelGetDialogs() {
        QTemporaryDir dir;
        writeFile(dir.filePath("bad.json"),
                  R"({"title": "t", "steps": [{"model": "rope", "text": "a", "view": "pie"}]})");
        app::MainWindow window(cpuOnly());
        auto* classroom = new app::Classroom(&window);
        classroom->step(1); // no lesson yet: nothing to step through
        QCOMPARE(classroom->currentStep(), -1);
        QVERIFY(!classroom->openFile(dir.filePath("bad.json")));
        QVERIFY(window.errorDialog() && window.errorDialog()->isVisible());
        QVERIFY2(window.errorDialog()->informativeText().startsWith(
                     "lesson: 'steps[0].view' is 'pie'; known: heatmap, "),
                 qPrintable(window.errorDialog()->informativeText()));

        writeFile(dir.filePath("missing.json"),
                  R"({"model": "no_such_model", "text": "a", "view": "heatmap"})");
        QVERIFY(!classroom->openFile(dir.filePath("missing.json")));
        const QString detail = window.errorDialog()->informativeText();
        QVERIFY2(detail.startsWith("scene: model 'no_such_model' not found (looked in ") &&
                     detail.contains("/models/no_such_model and ") &&
                     detail.contains(dir.path() + "/no_such_model"),
                 qPrintable(detail));
    }

    void sceneExportWritesFiguresAndRefusesBadScenes() {
        QTemporaryDir dir;
        io::Scene scene = app::loadLesson(lessonPath("4-")).steps[1]; // entropy violins
        app::saveSceneFile(dir.filePath("scene.json"), scene);
        for (const char* format : {"png", "svg", "pdf"}) {
            const QString out = dir.filePath(QStringLiteral("figure.%1").arg(format));
            const test::CliResult result =
                test::runHeadlight({"export", "--scene", dir.filePath("scene.json"), "--backend",
                                    "cpu", "--dpi", "50", "--out", out});
            QVERIFY2(result.exitCode == 0, qPrintable(result.err));
            QFile file(out);
            QVERIFY(file.open(QIODevice::ReadOnly));
            const QByteArray bytes = file.readAll();
            if (QByteArray(format) == "png") {
                const QImage image = QImage::fromData(bytes);
                QCOMPARE(image.size(), QSize(400, 275)); // 8 × 5.5 in at 50 dpi
                QVERIFY(distinctColours(image) > 20);
            } else if (QByteArray(format) == "svg") {
                QVERIFY(bytes.contains("<svg") && bytes.contains("Attention entropy"));
            } else {
                QVERIFY(bytes.startsWith("%PDF"));
            }
        }
        writeFile(
            dir.filePath("bad.json"),
            R"({"model": "rope", "text": "a", "view": "heatmap", "selection": {"layer": 9}})");
        const struct {
            QStringList args;
            QString message;
        } refusals[] = {
            {{"--scene", dir.filePath("bad.json"), "--out", dir.filePath("bad.png")},
             "headlight export: scene: 'selection.layer' 9 is out of range: the model has 2 layers "
             "(0 to 1)\n"},
            {{"--scene", dir.filePath("scene.json"), "--model", "x", "--out",
              dir.filePath("bad.png")},
             "headlight export: --scene gives the model, text, variant, view and selection: leave "
             "out --model\n"},
            {{"--scene", dir.filePath("none.json"), "--out", dir.filePath("bad.png")},
             "headlight export: cannot read " + dir.filePath("none.json") +
                 ": No such file or directory\n"},
        };
        for (const auto& refusal : refusals) {
            const test::CliResult result =
                test::runHeadlight(QStringList{"export", "--backend", "cpu"} + refusal.args);
            QCOMPARE(result.exitCode, 1);
            QCOMPARE(result.err.section(QLatin1Char('\n'), -2), refusal.message);
            QVERIFY(!QFile::exists(dir.filePath("bad.png")));
        }
    }
};

HEADLIGHT_TEST_MAIN(TestClassroom)
#include "test_classroom.moc"
