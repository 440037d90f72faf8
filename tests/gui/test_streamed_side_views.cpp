// Compare mode's B side and presentation mode on a long text: 1,500 tokens on the RoPE zoo model
// (causal, rotary positions, one byte a token) under the suite's HEADLIGHT_MAP_CAPTURE_TOKENS=1024,
// so each pass keeps queries and keys and a view's map is built when asked for. Both build it off
// the GUI thread, as the workspace does: while it is pending the view says which map it waits for
// and the GUI thread turns its event loop; the map that arrives is the selected head's, row by row
// equal to a reference computed here from the model's own pass; a second request made while the
// first is pending is the one drawn; a dock or window closed meanwhile draws nothing.
//
// Why a gate on the loaders' thread pool: the maps build in milliseconds, so "the GUI thread runs
// while the map is pending" would be a race. Holding the pool's one thread makes the pending state
// last until the test releases it, with no timing in any check.
#include "classroom.h"
#include "compare_dock.h"
#include "figure_view.h"
#include "main_window.h"
#include "presentation_window.h"
#include "streamed_view_loader.h"
#include "text_input.h"
#include "zoo_models.h"

#include <QSemaphore>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QThreadPool>
#include <QTimer>
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

using namespace headlight;

namespace {
constexpr int kWaitMs = 120000; // a generous ceiling for a loaded CI machine, not a measurement
constexpr int kTokens = 1500;
constexpr double kTolerance = 1e-5;

QString longText() {
    QString text;
    for (int i = 0; text.size() < kTokens; ++i)
        text += QStringLiteral("key %1 maps to value %2; ").arg(i * 7 % 97).arg(i * 13 % 89);
    return text.left(kTokens);
}

// Holds the pool the window's maps are built on (StreamedViewLoader::pool) on one thread that waits
// for release(): a map asked for meanwhile queues behind it.
class PoolGate {
public:
    PoolGate()
        : threads_(app::StreamedViewLoader::pool()->maxThreadCount()) {
        QThreadPool* pool = app::StreamedViewLoader::pool();
        pool->waitForDone();
        pool->setMaxThreadCount(1);
        // Why shared: the held thread may still be inside acquire() when the gate is gone.
        pool->start([shared = shared_] {
            shared->started.release();
            shared->held.acquire();
        });
        shared_->started.acquire();
    }
    ~PoolGate() { release(); }
    PoolGate(const PoolGate&) = delete;
    PoolGate& operator=(const PoolGate&) = delete;

    void release() {
        if (released_) return;
        released_ = true;
        shared_->held.release();
        app::StreamedViewLoader::pool()->setMaxThreadCount(threads_);
    }

private:
    struct Shared {
        QSemaphore started, held;
    };
    int threads_;
    std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
    bool released_ = false;
};

// Every heatmap title `view` painted, in order (a figure replaced before a paint was never seen).
class PaintedTitles : public QObject {
public:
    explicit PaintedTitles(app::FigureView* view)
        : view_(view) {
        view->installEventFilter(this);
    }
    QStringList titles;

protected:
    bool eventFilter(QObject*, QEvent* event) override {
        if (event->type() == QEvent::Paint)
            if (const auto* heatmap = std::get_if<render::HeatmapFigure>(&view_->figure()))
                titles << heatmap->title;
        return false;
    }

private:
    const app::FigureView* view_;
};

// The map of `head` of `layer` from a pass of the model itself (TransformerModel::forward keeping
// only that layer's post-RoPE queries and keys), each row a causal softmax of q·k/√d computed here
// in double: none of the window's code (runner, StreamedAttention, the atlas's rows) is in it.
std::vector<float> referenceMap(const app::LoadedModel& model, int layer, int head) {
    CaptureRequest capture;
    capture.probabilities = false;
    capture.queriesKeys = true;
    capture.layers = {layer};
    capture.finalState = false;
    const Trace trace =
        model.model->forward(app::prepareText(model.tokenizer.get(), longText()).input, capture);
    const LayerTrace& traced = trace.layers[std::size_t(layer)];
    const int64_t t = traced.queries.dim(0), heads = model.model->spec().heads;
    const int64_t d = traced.queries.dim(1) / heads, kvHeads = traced.keys.dim(1) / d;
    const float* queries = traced.queries.data() + head * d;
    const float* keys = traced.keys.data() + head / (heads / kvHeads) * d;
    std::vector<float> map(std::size_t(t * t), 0.0f);
    std::vector<double> row(std::size_t(t), 0.0);
    for (int64_t q = 0; q < t; ++q) {
        double high = -std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k <= q; ++k) {
            double dot = 0.0;
            for (int64_t i = 0; i < d; ++i)
                dot += double(queries[q * heads * d + i]) * double(keys[k * kvHeads * d + i]);
            row[std::size_t(k)] = dot / std::sqrt(double(d));
            high = std::max(high, row[std::size_t(k)]);
        }
        double sum = 0.0;
        for (int64_t k = 0; k <= q; ++k)
            sum += row[std::size_t(k)] = std::exp(row[std::size_t(k)] - high);
        for (int64_t k = 0; k <= q; ++k)
            map[std::size_t(q * t + k)] = float(row[std::size_t(k)] / sum);
    }
    return map;
}

QString noteOf(const app::FigureView* view) {
    const auto* empty = std::get_if<render::EmptyFigure>(&view->figure());
    return empty ? empty->message : QString();
}

const render::HeatmapFigure* heatmapOf(const app::FigureView* view) {
    return view->panels() ? nullptr : std::get_if<render::HeatmapFigure>(&view->figure());
}

// Turns the event loop until a zero-timer set now fires: the GUI thread is not blocked.
bool eventLoopTurns(QObject* context) {
    bool fired = false;
    QTimer::singleShot(0, context, [&fired] { fired = true; });
    return QTest::qWaitFor([&fired] { return fired; }, kWaitMs);
}

// Lets a build released from the gate run to its end and its "finished" reach the GUI thread.
void finishPendingBuilds() {
    app::StreamedViewLoader::pool()->waitForDone();
    QCoreApplication::sendPostedEvents();
    QCoreApplication::processEvents();
}

void save(QWidget* widget, const QString& name) {
    QVERIFY(widget->grab().save(QString(HEADLIGHT_TEST_OUTPUT_DIR) + "/" + name));
}
} // namespace

class TestStreamedSideViews : public QObject {
    Q_OBJECT
    std::unique_ptr<app::MainWindow> window_;
    app::Classroom* classroom_ = nullptr; // owned by the window
    app::CompareDock* dock_ = nullptr;

    app::Workspace* workspace() { return window_->workspace(); }
    const app::ForwardResult& longA() { return *workspace()->result(); }

    // The map `view` shows once it is drawn, with its title, checked against the reference of
    // `model`'s pass.
    void checkDrawnMap(const app::FigureView* view, const app::LoadedModel& model,
                       const QString& title, int layer, int head) {
        QVERIFY2(QTest::qWaitFor([view] { return heatmapOf(view) != nullptr; }, kWaitMs),
                 qPrintable(noteOf(view)));
        const render::HeatmapFigure& heatmap = *heatmapOf(view);
        QVERIFY2(heatmap.title.startsWith(title), qPrintable(heatmap.title));
        QCOMPARE(heatmap.rows, kTokens);
        const double diff = test::maxAbsDiff(heatmap.values, referenceMap(model, layer, head));
        QVERIFY2(diff <= kTolerance, qPrintable(QString::number(diff)));
    }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        window_ = std::make_unique<app::MainWindow>(app::LaunchOptions{});
        classroom_ = new app::Classroom(window_.get());
        window_->resize(1400, 900);
        window_->show();
        window_->openCheckpoint(test::zooModelsRoot() + "/rope");
        QTRY_VERIFY_WITH_TIMEOUT(window_->session().current(), kWaitMs);
        workspace()->setView(app::ViewKind::Heatmap);
        workspace()->setText(longText());
        QTRY_VERIFY_WITH_TIMEOUT(
            workspace()->result() && workspace()->result()->tokenCount() == kTokens, kWaitMs);
        QVERIFY(longA().streamed && longA().attention.empty());
        dock_ = window_->compareDock();
        dock_->show();
        QTRY_VERIFY_WITH_TIMEOUT(dock_->resultB() && dock_->resultB()->tokenCount() == kTokens,
                                 kWaitMs);
        // B runs on its own copy of the model, and keeps queries and keys too.
        QVERIFY(dock_->resultB()->streamed && dock_->resultB()->model != longA().model);
        QTRY_VERIFY_WITH_TIMEOUT(heatmapOf(dock_->viewB()), kWaitMs);
    }

    void theDockDrawsWhileBsMapIsBuiltOffTheGuiThread() {
        const app::ForwardResult& b = *dock_->resultB();
        QVERIFY(!b.streamed->hasMap(1, 2));
        PoolGate gate;
        workspace()->selectHead(1, 2);
        // The request returned without the map: each side says which map it waits for.
        QVERIFY2(noteOf(dock_->viewB())
                     .startsWith(QStringLiteral("B · Building layer 1 · head 2's map")),
                 qPrintable(noteOf(dock_->viewB())));
        QVERIFY(noteOf(dock_->viewA()).startsWith(QStringLiteral("A · Building layer 1 · head 2")));
        QVERIFY(noteOf(dock_->differenceView()).contains(QStringLiteral("maps are built")));
        QVERIFY(eventLoopTurns(this));
        QVERIFY(!b.streamed->hasMap(1, 2)); // still pending after the GUI thread's turn
        QVERIFY(noteOf(dock_->viewB()).startsWith(QStringLiteral("B · Building")));
        save(window_.get(), QStringLiteral("streamed_compare_building.png"));
        gate.release();
        checkDrawnMap(dock_->viewB(), *b.model, QStringLiteral("B · Layer 1 · head 2"), 1, 2);
        checkDrawnMap(dock_->viewA(), *longA().model, QStringLiteral("A · Layer 1 · head 2"), 1, 2);
        // A − B of one model run twice: zero up to the passes' rounding.
        QTRY_VERIFY_WITH_TIMEOUT(heatmapOf(dock_->differenceView()), kWaitMs);
        const render::HeatmapFigure& difference = *heatmapOf(dock_->differenceView());
        QCOMPARE(difference.rows, kTokens);
        QVERIFY(test::maxAbsDiff(difference.values, std::vector<float>(difference.values.size())) <=
                kTolerance);
        save(window_.get(), QStringLiteral("streamed_compare_drawn.png"));
    }

    void aSecondRequestWhileTheFirstIsPendingWinsInTheDock() {
        const app::ForwardResult& b = *dock_->resultB();
        QVERIFY(!b.streamed->hasMap(0, 1) && !b.streamed->hasMap(0, 3));
        PoolGate gate;
        workspace()->selectHead(0, 1); // its build waits in the held pool
        QVERIFY(noteOf(dock_->viewB()).startsWith(QStringLiteral("B · Building layer 0 · head 1")));
        PaintedTitles painted(dock_->viewB()); // from here on, as the screen would show them
        workspace()->selectHead(0, 3);
        QVERIFY(noteOf(dock_->viewB()).startsWith(QStringLiteral("B · Building layer 0 · head 3")));
        QVERIFY(eventLoopTurns(this));
        gate.release();
        checkDrawnMap(dock_->viewB(), *b.model, QStringLiteral("B · Layer 0 · head 3"), 0, 3);
        QTRY_VERIFY_WITH_TIMEOUT(!painted.titles.isEmpty(), kWaitMs);
        for (const QString& title : painted.titles)
            QVERIFY2(title.startsWith(QStringLiteral("B · Layer 0 · head 3")), qPrintable(title));
    }

    void aClosedDockDrawsNoMapThatWasPending() {
        const app::ForwardResult& b = *dock_->resultB();
        QVERIFY(!b.streamed->hasMap(1, 1));
        {
            PoolGate gate;
            workspace()->selectHead(1, 1);
            QVERIFY(noteOf(dock_->viewB()).startsWith(QStringLiteral("B · Building layer 1")));
            dock_->close();
        }
        finishPendingBuilds();
        QVERIFY(noteOf(dock_->viewB()).startsWith(QStringLiteral("B · Building layer 1")));
        // Shown again, B runs the text again and draws the selection.
        QSignalSpy bShown(dock_, &app::CompareDock::resultBShown);
        dock_->show();
        QTRY_VERIFY_WITH_TIMEOUT(!bShown.isEmpty(), kWaitMs);
        checkDrawnMap(dock_->viewB(), *dock_->resultB()->model,
                      QStringLiteral("B · Layer 1 · head 1"), 1, 1);
        dock_->close();
    }

    void presentationDrawsWhileTheMapIsBuiltOffTheGuiThread() {
        workspace()->selectHead(0, 2);
        QTRY_VERIFY_WITH_TIMEOUT(!workspace()->drawing(), kWaitMs);
        classroom_->present();
        app::PresentationWindow* presentation = classroom_->presentation();
        QVERIFY(presentation->isVisible());
        QVERIFY(heatmapOf(presentation->figureView()));
        QVERIFY(!longA().streamed->hasMap(1, 2));
        PoolGate gate;
        QTest::keyClick(presentation, Qt::Key_Down); // the next layer: (1, 2)
        QCOMPARE(workspace()->state().layer, 1);
        QVERIFY2(noteOf(presentation->figureView())
                     .startsWith(QStringLiteral("Building layer 1 · head 2's map")),
                 qPrintable(noteOf(presentation->figureView())));
        QVERIFY(eventLoopTurns(this));
        QVERIFY(!longA().streamed->hasMap(1, 2));
        save(presentation, QStringLiteral("streamed_presentation_building.png"));
        gate.release();
        checkDrawnMap(presentation->figureView(), *longA().model,
                      QStringLiteral("Layer 1 · head 2"), 1, 2);
        // The strip of 1,500 chips scrolls in a quarter of the window: the map keeps the room.
        QVERIFY(presentation->figureView()->height() >= presentation->height() / 2);
        save(presentation, QStringLiteral("streamed_presentation_drawn.png"));
    }

    void aSecondRequestWhileTheFirstIsPendingWinsInThePresentation() {
        app::PresentationWindow* presentation = classroom_->presentation();
        QVERIFY(!longA().streamed->hasMap(1, 3) && !longA().streamed->hasMap(0, 3));
        PoolGate gate;
        QTest::keyClick(presentation, Qt::Key_Plus); // (1, 3): its build waits in the held pool
        QVERIFY(noteOf(presentation->figureView()).startsWith(QStringLiteral("Building layer 1")));
        PaintedTitles painted(presentation->figureView());
        QTest::keyClick(presentation, Qt::Key_Up); // (0, 3), while (1, 3) is pending
        QVERIFY(noteOf(presentation->figureView())
                    .startsWith(QStringLiteral("Building layer 0 · head 3")));
        gate.release();
        checkDrawnMap(presentation->figureView(), *longA().model,
                      QStringLiteral("Layer 0 · head 3"), 0, 3);
        QTRY_VERIFY_WITH_TIMEOUT(!painted.titles.isEmpty(), kWaitMs);
        for (const QString& title : painted.titles)
            QVERIFY2(title.startsWith(QStringLiteral("Layer 0 · head 3")), qPrintable(title));
    }

    void aClosedPresentationDrawsNoMapThatWasPending() {
        app::PresentationWindow* presentation = classroom_->presentation();
        QVERIFY(!longA().streamed->hasMap(1, 0));
        {
            PoolGate gate;
            workspace()->selectHead(1, 0);
            QVERIFY(noteOf(presentation->figureView())
                        .startsWith(QStringLiteral("Building layer 1 · head 0")));
            QTest::keyClick(presentation, Qt::Key_Escape);
            QVERIFY(!presentation->isVisible());
        }
        finishPendingBuilds();
        QVERIFY(noteOf(presentation->figureView()).startsWith(QStringLiteral("Building layer 1")));
        // The workspace drew its own view meanwhile; presented again, the window shows that map.
        QTRY_VERIFY_WITH_TIMEOUT(!workspace()->drawing(), kWaitMs);
        classroom_->present();
        checkDrawnMap(presentation->figureView(), *longA().model,
                      QStringLiteral("Layer 1 · head 0"), 1, 0);
        QTest::keyClick(presentation, Qt::Key_Escape);
    }
};

HEADLIGHT_TEST_MAIN(TestStreamedSideViews)
#include "test_streamed_side_views.moc"
