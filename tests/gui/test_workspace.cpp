// The workspace with a real checkpoint (the tiny GPT-2 in tests/data/models/gpt2) under the
// offscreen platform: typing re-runs the forward pass on a worker thread, stale passes are
// dropped, the keyboard shortcuts and the model grid pick heads, the token strip picks the query,
// hovering the heatmap reads out the cell, and the pixels of the view change with each of these.
#include "figure_view.h"
#include "golden.h"
#include "main_window.h"
#include "text_input.h"
#include "token_strip.h"
#include "view_bar.h"

#include <QAction>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <algorithm>
#include <cmath>

using namespace headlight;

namespace {
constexpr int kWaitMs = 60000; // a generous ceiling for a loaded CI machine, not a measurement

QAction* findAction(QMenuBar* bar, const QString& menuTitle, const QString& text) {
    for (QAction* menu : bar->actions()) {
        if (menu->text().remove('&') != menuTitle) continue;
        for (QAction* action : menu->menu()->actions())
            if (action->text().remove('&') == text) return action;
    }
    return nullptr;
}

QImage grabView(app::Workspace* workspace) {
    return workspace->figureView()->grab().toImage();
}

// Opens the GPT-2 checkpoint and waits for the first pass on the sample sentence.
void openGpt2(app::MainWindow& window) {
    QSignalSpy shown(window.workspace(), &app::Workspace::resultShown);
    window.openCheckpoint(test::goldenRoot() + "/gpt2");
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), kWaitMs);
}

// Types `text` into the text box (replacing what is there) and waits until the views show it.
void typeText(app::Workspace* workspace, const QString& text) {
    workspace->textEdit()->selectAll();
    QTest::keyClick(workspace->textEdit(), Qt::Key_Delete);
    QTest::keyClicks(workspace->textEdit(), text);
    QTRY_VERIFY_WITH_TIMEOUT(workspace->result() && workspace->result()->text == text, kWaitMs);
}

// The type-7 quantile (NumPy's default) of `values`, in double.
double quantile7(std::vector<double> values, double fraction) {
    std::sort(values.begin(), values.end());
    const double position = fraction * double(values.size() - 1);
    const auto below = std::size_t(position);
    const std::size_t above = std::min(below + 1, values.size() - 1);
    return values[below] + (position - double(below)) * (values[above] - values[below]);
}

// Per head of [L, H, T, T] `p` (layer-major), the entropy in nats of each query row, computed
// here in double from the maps, independently of the analysis library.
std::vector<std::vector<double>> entropiesPerHead(const Tensor& p) {
    const int64_t layers = p.dim(0), heads = p.dim(1), tokens = p.dim(2);
    std::vector<std::vector<double>> out(std::size_t(layers * heads));
    for (int64_t lh = 0; lh < layers * heads; ++lh)
        for (int64_t q = 0; q < tokens; ++q) {
            const float* row = p.data() + (lh * tokens + q) * tokens;
            double entropy = 0.0;
            for (int64_t k = 0; k < tokens; ++k)
                if (row[k] > 0.0f) entropy -= double(row[k]) * std::log(double(row[k]));
            out[std::size_t(lh)].push_back(entropy);
        }
    return out;
}

// Per (layer pair l → l + 1, head) of [L, H, T, T] `p`, the Jensen-Shannon divergence in bits
// between the two layers' rows of each query, computed here in double.
std::vector<std::vector<double>> adjacentJsdPerHead(const Tensor& p) {
    const int64_t layers = p.dim(0), heads = p.dim(1), tokens = p.dim(2);
    auto klToMean = [](double a, double b) {
        return a > 0.0 ? a * std::log2(2.0 * a / (a + b)) : 0.0;
    };
    std::vector<std::vector<double>> out(std::size_t((layers - 1) * heads));
    for (int64_t l = 0; l + 1 < layers; ++l)
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t q = 0; q < tokens; ++q) {
                const float* a = p.data() + ((l * heads + h) * tokens + q) * tokens;
                const float* b = a + heads * tokens * tokens;
                double jsd = 0.0;
                for (int64_t k = 0; k < tokens; ++k)
                    jsd += 0.5 * (klToMean(a[k], b[k]) + klToMean(b[k], a[k]));
                out[std::size_t(l * heads + h)].push_back(jsd);
            }
    return out;
}

int expectedTokens(const app::MainWindow& window, const QString& text) {
    return int(app::prepareText(
                   const_cast<app::MainWindow&>(window).session().current()->tokenizer.get(), text)
                   .input.ids.size());
}
} // namespace

class TestWorkspace : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void typingRunsTheForwardPassAndRedraws() {
        app::MainWindow window({});
        window.show();
        openGpt2(window);
        app::Workspace* workspace = window.workspace();
        QVERIFY(workspace->tokenCount() > 0); // the sample sentence ran
        const QImage before = grabView(workspace);

        QSignalSpy finished(&workspace->runner(), &app::ForwardRunner::finished);
        typeText(workspace, "Hello world");
        // Every delivered result is for the newest text: intermediate keystrokes never show.
        for (const QList<QVariant>& args : finished)
            QCOMPARE(args[0].value<std::shared_ptr<const app::ForwardResult>>()->text,
                     QString("Hello world"));
        QCOMPARE(workspace->tokenCount(), expectedTokens(window, "Hello world"));
        QCOMPARE(workspace->tokenStrip()->tokens().size(), workspace->tokenCount());
        QCOMPARE(workspace->result()->attention.shape(),
                 (std::vector<int64_t>{2, 4, workspace->tokenCount(), workspace->tokenCount()}));
        QVERIFY(grabView(workspace) != before);
    }

    // The head × head JSD matrix and the rollout are computed when their view is first drawn,
    // never for a pass shown in another view (they cost O((L·H)²·T²) and O(L·T³)).
    void costlyStatisticsWaitForTheirView() {
        app::MainWindow window({});
        window.show();
        openGpt2(window);
        app::Workspace* workspace = window.workspace();
        workspace->setView(app::ViewKind::Heatmap);
        typeText(workspace, "costly statistics wait");
        QVERIFY(!workspace->result()->stats.costlyComputed());
        workspace->setView(app::ViewKind::EntropyViolins);
        QVERIFY(!workspace->result()->stats.costlyComputed());
        workspace->setView(app::ViewKind::Rollout);
        QVERIFY(workspace->result()->stats.costlyComputed());
        const int layersHeads = 2 * 4;
        QCOMPARE(workspace->result()
                     ->stats.costly(workspace->result()->attention, workspace->result()->valid)
                     .headJsd.shape(),
                 (std::vector<int64_t>{layersHeads, layersHeads}));
    }

    // The entropy and JSD violins wait for their view too: a toggle shown in the heatmap computes
    // none, and once a violin view is shown each violin's quartiles and median are those of the
    // per-query entropies (nats) or adjacent-layer JSDs (bits) of its head, computed here in
    // double from the pass's probability maps, and each layer's heads stand in order of median.
    void violinsWaitForTheirViewAndSummariseTheMapsEntropyAndJsd() {
        app::MainWindow window({});
        window.show();
        openGpt2(window);
        app::Workspace* workspace = window.workspace();
        workspace->setView(app::ViewKind::Heatmap);
        typeText(workspace, "the violins wait for their view");
        QSignalSpy shown(workspace, &app::Workspace::resultShown);
        workspace->setVariant(
            QJsonDocument::fromJson(R"({"mask": {"preset": "longformer", "window": 2}})").object());
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), kWaitMs);
        const app::ForwardResult& result = *workspace->result();
        QVERIFY(!result.variant.isVanilla());
        QVERIFY(!result.stats.violinsComputed());
        // Typed text has no padding: every query row counts.
        const int tokens = workspace->tokenCount();
        QCOMPARE(result.attention.shape(), (std::vector<int64_t>{2, 4, tokens, tokens}));
        QCOMPARE(result.valid, analysis::TokenMask(std::size_t(tokens), 1));
        for (const bool jsd : {false, true}) {
            workspace->setView(jsd ? app::ViewKind::JsdViolins : app::ViewKind::EntropyViolins);
            QVERIFY(result.stats.violinsComputed());
            const auto& violins = std::get<render::ViolinFigure>(workspace->figureView()->figure());
            const std::vector<std::vector<double>> perHead =
                jsd ? adjacentJsdPerHead(result.attention) : entropiesPerHead(result.attention);
            QCOMPARE(violins.panels.size(), std::size_t(jsd ? 1 : 2)); // layer pairs or layers
            for (const render::ViolinPanel& panel : violins.panels) {
                QCOMPARE(int(panel.violins.size()), 4);
                double previousMedian = -1.0;
                for (const render::ViolinShape& shape : panel.violins) {
                    const std::vector<double>& values =
                        perHead[std::size_t(panel.layer * 4 + shape.head)];
                    const QString where = QString("%1 layer %2 head %3")
                                              .arg(jsd ? "JSD" : "entropy")
                                              .arg(panel.layer)
                                              .arg(shape.head);
                    const double median = quantile7(values, 0.5);
                    QVERIFY2(std::abs(shape.q1 - quantile7(values, 0.25)) < 1e-4,
                             qPrintable(where));
                    QVERIFY2(std::abs(shape.median - median) < 1e-4, qPrintable(where));
                    QVERIFY2(std::abs(shape.q3 - quantile7(values, 0.75)) < 1e-4,
                             qPrintable(where));
                    QVERIFY2(median >= previousMedian - 1e-4, qPrintable(where + ": out of order"));
                    previousMedian = median;
                }
            }
        }
    }

    void staleRequestsAreDropped() {
        app::MainWindow window({});
        openGpt2(window);
        app::ForwardRunner& runner = window.workspace()->runner();
        QSignalSpy finished(&runner, &app::ForwardRunner::finished);
        runner.runNow("one");
        runner.runNow("one two three");
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() && !runner.busy(), kWaitMs);
        QCOMPARE(finished.size(), 1);
        const auto result = finished[0][0].value<std::shared_ptr<const app::ForwardResult>>();
        QCOMPARE(result->text, QString("one two three"));
        QCOMPARE(result->serial, runner.latestRequest());
    }

    void shortcutsStepLayerAndHead() {
        app::MainWindow window({});
        window.show();
        QApplication::setActiveWindow(&window);
        QVERIFY(QTest::qWaitForWindowActive(&window));
        openGpt2(window);
        app::Workspace* workspace = window.workspace();
        workspace->setView(app::ViewKind::Heatmap);
        QCOMPARE(workspace->state().layer, 0);
        QCOMPARE(workspace->state().head, 0);
        QAction* next = findAction(window.menuBar(), "View", "Next layer");
        QVERIFY(next);
        QCOMPARE(next->shortcut(), QKeySequence(Qt::ALT | Qt::Key_Down));

        const QImage head00 = grabView(workspace);
        QTest::keyClick(&window, Qt::Key_Down, Qt::AltModifier);
        QCOMPARE(workspace->state().layer, 1);
        const QImage head10 = grabView(workspace);
        QVERIFY(head10 != head00);
        QTest::keyClick(&window, Qt::Key_Right, Qt::AltModifier);
        QCOMPARE(workspace->state().head, 1);
        QVERIFY(grabView(workspace) != head10);
        QTest::keyClick(&window, Qt::Key_Down, Qt::AltModifier); // already the last layer
        QCOMPARE(workspace->state().layer, 1);
        QTest::keyClick(&window, Qt::Key_Up, Qt::AltModifier);
        QTest::keyClick(&window, Qt::Key_Left, Qt::AltModifier);
        QCOMPARE(workspace->state().layer, 0);
        QCOMPARE(workspace->state().head, 0);
        QCOMPARE(grabView(workspace), head00);
    }

    void clickingTheModelGridFocusesAHead() {
        app::MainWindow window({});
        window.show();
        openGpt2(window);
        app::Workspace* workspace = window.workspace();
        workspace->setView(app::ViewKind::ModelGrid);
        app::FigureView* view = workspace->figureView();
        const auto* grid = std::get_if<render::ModelGridFigure>(&view->figure());
        QVERIFY(grid);
        const render::ModelGridLayout layout = render::layoutModelGrid(view->rect(), *grid);
        const QImage before = grabView(workspace);
        QTest::mouseClick(view, Qt::LeftButton, {},
                          render::modelGridCellRect(layout, 1, 3).center().toPoint());
        QCOMPARE(workspace->state().layer, 1);
        QCOMPARE(workspace->state().head, 3);
        QVERIFY(grabView(workspace) != before); // the outline moved
        workspace->setView(app::ViewKind::Heatmap);
        const auto* heatmap = std::get_if<render::HeatmapFigure>(&view->figure());
        QVERIFY(heatmap && heatmap->title.contains("Layer 1 · head 3"));
    }

    void tokenStripSelectsTheQuery() {
        app::MainWindow window({});
        window.show();
        openGpt2(window);
        app::Workspace* workspace = window.workspace();
        typeText(workspace, "the cat sat");
        workspace->setView(app::ViewKind::TokenLines);
        const QImage before = grabView(workspace);
        app::TokenStrip* strip = workspace->tokenStrip();
        QTest::mouseClick(strip, Qt::LeftButton, {}, strip->chipRect(1).center());
        QCOMPARE(workspace->state().query, 1);
        QCOMPARE(strip->selected(), 1);
        QVERIFY(grabView(workspace) != before); // other queries' lines fade
        workspace->setView(app::ViewKind::Heatmap);
        QCOMPARE(std::get<render::HeatmapFigure>(workspace->figureView()->figure()).emphasisedRow,
                 1);
        QTest::mouseClick(strip, Qt::LeftButton, {}, strip->chipRect(1).center()); // again: cleared
        QCOMPARE(workspace->state().query, -1);
    }

    void hoverReadsOutTheHeatmapCell() {
        app::MainWindow window({});
        window.show();
        openGpt2(window);
        app::Workspace* workspace = window.workspace();
        typeText(workspace, "the cat sat");
        workspace->setView(app::ViewKind::Heatmap);
        app::FigureView* view = workspace->figureView();
        const auto& heatmap = std::get<render::HeatmapFigure>(view->figure());
        const render::HeatmapLayout layout = render::layoutHeatmap(view->rect(), heatmap);
        const int last = heatmap.rows - 1;
        QTest::mouseMove(view,
                         render::heatmapCellRect(layout, heatmap, last, 0).center().toPoint());
        const float weight = heatmap.values[std::size_t(last) * std::size_t(heatmap.cols)];
        QTRY_VERIFY(!view->readout().isEmpty());
        QVERIFY2(view->readout().contains(heatmap.rowLabels[last]), qPrintable(view->readout()));
        QVERIFY2(view->readout().contains(QString::number(weight, 'f', 3)),
                 qPrintable(view->readout()));
        QCOMPARE(view->readout(), app::heatmapReadout(heatmap, last, 0));
    }

    // Each of the figure views shows a figure (not the empty one), looks unlike the view before
    // it, and repaints differently once another text has run. It does not check what the pixels
    // say about the numbers.
    void everyViewShowsAFigureThatChangesWithTheText() {
        app::MainWindow window({});
        window.resize(1200, 800);
        window.show();
        openGpt2(window);
        app::Workspace* workspace = window.workspace();
        typeText(workspace, "the cat sat on the mat");
        std::vector<QImage> first;
        QImage previous;
        for (int i = 0; i < app::kViewCount; ++i) {
            workspace->setView(app::ViewKind(i));
            QCOMPARE(workspace->viewBar()->currentIndex(), i);
            QVERIFY2(
                !std::holds_alternative<render::EmptyFigure>(workspace->figureView()->figure()),
                qPrintable(app::viewName(app::ViewKind(i))));
            const QImage image = grabView(workspace);
            QVERIFY(image != previous);
            image.save(QString(HEADLIGHT_TEST_OUTPUT_DIR) + "/view_" + QString::number(i) + ".png");
            first.push_back(image);
            previous = image;
        }
        typeText(workspace, "a dog ran to the park");
        for (int i = 0; i < app::kViewCount; ++i) {
            workspace->setView(app::ViewKind(i));
            QVERIFY2(grabView(workspace) != first[std::size_t(i)],
                     qPrintable(app::viewName(app::ViewKind(i)) + " did not change with the text"));
        }
        workspace->showCanvas();
        QVERIFY(workspace->canvasShown());
        QVERIFY(window.menuBar() &&
                findAction(window.menuBar(), "Help", "Attention is not explanation…"));
    }

    void forwardErrorsStayInlineAndKeepTheLastViews() {
        app::MainWindow window({});
        window.show();
        openGpt2(window);
        app::Workspace* workspace = window.workspace();
        const int tokens = workspace->tokenCount();
        QSignalSpy failed(&workspace->runner(), &app::ForwardRunner::failed);
        workspace->setText(QString("a ").repeated(700)); // over GPT-2's 512 positions
        QVERIFY(failed.wait(kWaitMs));
        auto* error = workspace->findChild<QLabel*>("forwardError");
        QVERIFY(error && error->isVisible());
        QVERIFY2(error->text().contains("512"), qPrintable(error->text()));
        QCOMPARE(workspace->tokenCount(), tokens);
        QVERIFY(!window.errorDialog()); // typing never raises a dialog
    }

    void windowStateAndTextAreRemembered() {
        {
            app::MainWindow window({});
            window.show();
            openGpt2(window);
            typeText(window.workspace(), "remember me");
            window.workspace()->setView(app::ViewKind::Rollout);
            window.close();
        }
        QSettings settings;
        QVERIFY(settings.contains("window/geometry"));
        QCOMPARE(settings.value("workspace/text").toString(), QString("remember me"));
        QVERIFY(settings.value("recentFolders").toStringList().first().endsWith("/gpt2"));
        app::MainWindow again({});
        QCOMPARE(again.workspace()->text(), QString("remember me"));
        QCOMPARE(again.workspace()->view(), app::ViewKind::Rollout);
    }
};

HEADLIGHT_TEST_MAIN(TestWorkspace)
#include "test_workspace.moc"
