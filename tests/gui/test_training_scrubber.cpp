// The training scrubber in the window (docs/scrubber.md), on a zoo run built from shipped zoo
// models (steps 0 and 200 share weights, step 100 has others): opening a step folder shows the
// bar, moving its slider (or [ and ]) opens that checkpoint and redraws the view for the same
// text, and "Measure over training" fills the Training view's lines, whose marker follows the
// slider. Also measures the time from a slider move to pixels (printed, not asserted).
#include "background_job.h"
#include "figure_view.h"
#include "main_window.h"
#include "run_folder_fixture.h"
#include "training_scrubber.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QStandardPaths>
#include <QTest>
#include <QTimer>
#include <algorithm>

using namespace headlight;

namespace {
constexpr int kScrubWaitMs = 60000; // a generous ceiling for a loaded CI machine
const QString kRunText = QStringLiteral("abcabcabc");

QString canonicalOf(const QString& path) {
    return QFileInfo(path).canonicalFilePath();
}

// Waits until the window shows a pass of `folder`'s model newer than `after`, drawn.
bool waitForCheckpoint(app::MainWindow& window, const QString& folder, quint64 after) {
    app::Workspace* workspace = window.workspace();
    return QTest::qWaitFor(
        [&] {
            const auto model = workspace->sharedModel();
            const app::ForwardResult* result = workspace->result();
            return model && canonicalOf(model->folder) == canonicalOf(folder) && result &&
                   result->serial > after && !workspace->runner().busy() &&
                   !window.session().busy() && !workspace->drawing();
        },
        kScrubWaitMs);
}

quint64 serialOf(const app::Workspace* workspace) {
    return workspace->result() ? workspace->result()->serial : 0;
}

// Like waitForCheckpoint, but woken by the workspace's redraw itself, not by polling (which
// sleeps 10 ms between looks): for timing.
bool waitForRedraw(app::Workspace* workspace, const QString& folder, quint64 after) {
    const auto shown = [&] {
        const auto model = workspace->sharedModel();
        return model && canonicalOf(model->folder) == canonicalOf(folder) && workspace->result() &&
               workspace->result()->serial > after;
    };
    QEventLoop loop;
    QTimer timeout;
    timeout.setSingleShot(true);
    QObject::connect(&timeout, &QTimer::timeout, &loop, &QEventLoop::quit);
    QObject::connect(workspace, &app::Workspace::refreshed, &loop, [&] {
        if (shown()) loop.quit();
    });
    timeout.start(kScrubWaitMs);
    loop.exec();
    return shown();
}

std::vector<float> attentionOf(const app::Workspace* workspace) {
    const auto values = workspace->result()->attention.values();
    return {values.begin(), values.end()};
}
} // namespace

class TestTrainingScrubber : public QObject {
    Q_OBJECT
    test::ScratchDir scratch_;
    QString run_;

    // The window on `run`'s step `index` folder with the text, shown at 1280 x 800.
    static bool openStep(app::MainWindow& window, const QString& run, const QString& step) {
        window.resize(1280, 800);
        window.show();
        window.workspace()->setText(kRunText);
        window.openCheckpoint(run + "/" + step);
        return waitForCheckpoint(window, run + "/" + step, 0);
    }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        QVERIFY(scratch_.isValid());
        run_ = test::makeRunFolder(scratch_.filePath("induction"),
                                   {{0, "copy"}, {100, "rope"}, {200, "copy"}}, kRunText);
    }

    void theSliderRedrawsTheViewAtEachCheckpoint() {
        app::MainWindow window({});
        QVERIFY(openStep(window, run_, "step_000000"));
        app::TrainingScrubber* scrubber = window.trainingScrubber();
        QVERIFY(scrubber->isVisible());
        QCOMPARE(scrubber->slider()->maximum(), 2);
        QCOMPARE(scrubber->checkpoint(), 0);
        app::Workspace* workspace = window.workspace();
        const std::vector<float> step0 = attentionOf(workspace);
        const QImage pixels0 = workspace->figureView()->grab().toImage();

        scrubber->slider()->setValue(1);
        QVERIFY(waitForCheckpoint(window, run_ + "/step_000100", serialOf(workspace)));
        QCOMPARE(workspace->text(), kRunText);
        QVERIFY(attentionOf(workspace) != step0);
        QVERIFY(workspace->figureView()->grab().toImage() != pixels0);
        QCOMPARE(scrubber->checkpoint(), 1);

        // ]: step 200, the weights of step 0 again: the same maps and pixels.
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        workspace->figureView()->setFocus();
        QTest::keyClick(&window, Qt::Key_BracketRight);
        QVERIFY(waitForCheckpoint(window, run_ + "/step_000200", serialOf(workspace)));
        QCOMPARE(attentionOf(workspace), step0);
        QCOMPARE(workspace->figureView()->grab().toImage(), pixels0);
        QTest::keyClick(&window, Qt::Key_BracketLeft);
        QVERIFY(waitForCheckpoint(window, run_ + "/step_000100", serialOf(workspace)));
        QCOMPARE(scrubber->slider()->value(), 1);

        // A model of no series hides the bar.
        window.openCheckpoint(test::zooModel("rope"));
        QVERIFY(waitForCheckpoint(window, test::zooModel("rope"), serialOf(workspace)));
        QVERIFY(!scrubber->isVisible());
    }

    void measuringDrawsTheLinesWithAMarker() {
        app::MainWindow window({});
        QVERIFY(openStep(window, run_, "step_000100"));
        app::TrainingScrubber* scrubber = window.trainingScrubber();
        QTest::mouseClick(scrubber->measureButton(), Qt::LeftButton);
        QVERIFY(QTest::qWaitFor([&] { return scrubber->curves() != nullptr; }, kScrubWaitMs));
        QCOMPARE(scrubber->curves()->metrics.size(), std::size_t(3));
        app::Workspace* workspace = window.workspace();
        QCOMPARE(workspace->view(), app::ViewKind::Training);
        const auto marker = [workspace](std::size_t panel) {
            const render::PanelsFigure* panels = workspace->figureView()->panels();
            return panels ? std::get<render::LineChartFigure>(panels->panels[panel]).marker
                          : std::nullopt;
        };
        QVERIFY(QTest::qWaitFor([&] { return marker(0) == 100.0; }, kScrubWaitMs));
        QCOMPARE(marker(1), std::optional(100.0));
        const auto& loss =
            std::get<render::LineChartFigure>(workspace->figureView()->panels()->panels[0]);
        QCOMPARE(loss.points.size(), std::size_t(3));
        QCOMPARE(loss.points[0].y(), scrubber->curves()->metrics[0].loss);
        workspace->figureView()->grab().toImage().save(
            QStringLiteral(HEADLIGHT_TEST_OUTPUT_DIR "/training_view.png"));
        scrubber->slider()->setValue(2);
        QVERIFY(waitForCheckpoint(window, run_ + "/step_000200", 0));
        QVERIFY(QTest::qWaitFor([&] { return marker(0) == 200.0; }, kScrubWaitMs));
    }

    // The time from a slider move to pixels, over 20 moves of a 21-checkpoint zoo run, on the
    // heatmap: printed for docs/scrubber.md (no threshold: machines differ).
    void sliderLatency() {
        std::vector<std::pair<int, QString>> steps;
        for (int i = 0; i <= 20; ++i)
            steps.emplace_back(100 * i, i % 2 ? "rope" : "copy");
        const QString run = test::makeRunFolder(scratch_.freshFolder(), steps, kRunText);
        app::MainWindow window({});
        QVERIFY(openStep(window, run, "step_000000"));
        app::Workspace* workspace = window.workspace();
        std::vector<double> milliseconds;
        for (int i = 1; i <= 20; ++i) {
            const quint64 before = serialOf(workspace);
            QElapsedTimer clock;
            clock.start();
            window.trainingScrubber()->slider()->setValue(i);
            const QString folder = run + QStringLiteral("/step_%1").arg(100 * i, 6, 10, QChar('0'));
            QVERIFY(waitForRedraw(workspace, folder, before));
            QVERIFY(!workspace->figureView()->grab().isNull());
            milliseconds.push_back(double(clock.nsecsElapsed()) / 1e6);
        }
        std::sort(milliseconds.begin(), milliseconds.end());
        qInfo("slider move to pixels over 20 moves: median %.1f ms, p95 %.1f ms, max %.1f ms",
              (milliseconds[9] + milliseconds[10]) / 2, milliseconds[18], milliseconds[19]);
    }
};

HEADLIGHT_TEST_MAIN(TestTrainingScrubber)
#include "test_training_scrubber.moc"
