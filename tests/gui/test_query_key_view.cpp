// The query-key embedding views in the window with the tiny GPT-2 (tests/data/models/gpt2): the
// tab runs the second pass that keeps queries and keys, hovering a point reads out its token (in
// the read-out and as a tooltip), clicking it selects that token as the query everywhere (the
// token strip too), clicking a cell of the head grid focuses that head, and the View menu's
// Ctrl+Shift+K opens the view.
#include "figure_view.h"
#include "golden.h"
#include "main_window.h"
#include "query_key_figures.h"
#include "token_strip.h"

#include <QAction>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QToolTip>

using namespace headlight;

namespace {
constexpr int kQueryKeyWaitMs =
    60000; // a generous ceiling for a loaded CI machine, not a measurement

void openGpt2ForQueryKey(app::MainWindow& window, const QString& text) {
    QSignalSpy shown(window.workspace(), &app::Workspace::resultShown);
    window.workspace()->setText(text);
    window.openCheckpoint(test::goldenRoot() + "/gpt2");
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), kQueryKeyWaitMs);
}

// The view's panels once the pass with the query-key embedding has arrived.
const render::PanelsFigure* qkPanels(app::Workspace* workspace) {
    const auto ready = [workspace] {
        const app::ForwardResult* r = workspace->result();
        return r && r->queryKey && workspace->figureView()->panels();
    };
    if (!QTest::qWaitFor(ready, kQueryKeyWaitMs)) return nullptr;
    return workspace->figureView()->panels();
}

// The panel's cell rectangle in the view.
QRectF qkPanelCell(app::FigureView* view, std::size_t panel) {
    return render::layoutPanels(view->rect(), *view->panels()).cells.at(panel);
}
} // namespace

class TestQueryKeyView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void hoverReadsOutTheTokenAndClickSelectsIt() {
        app::MainWindow window({});
        window.resize(1300, 850);
        window.show();
        openGpt2ForQueryKey(window, "the cat sat on the mat");
        app::Workspace* workspace = window.workspace();
        workspace->setView(app::ViewKind::QkEmbedding);
        const render::PanelsFigure* panels = qkPanels(workspace);
        QVERIFY(panels);
        QCOMPARE(int(panels->panels.size()), 3); // by position, by token kind, the layer's heads
        app::FigureView* view = workspace->figureView();
        const auto scatter = std::get<render::ScatterFigure>(panels->panels[0]);
        QCOMPARE(int(scatter.points.size()), 2 * workspace->tokenCount());
        QVERIFY(scatter.xAxis.startsWith("PC1 (") && scatter.xAxis.endsWith("% of variance)"));

        // The last token's query: its read-out names it, as the tooltip does.
        const int last = workspace->tokenCount() - 1;
        const QRectF cell = qkPanelCell(view, 0);
        const render::ScatterLayout layout = render::layoutScatter(cell, scatter);
        const auto point = std::find_if(
            scatter.points.begin(), scatter.points.end(),
            [last](const render::ScatterPoint& p) { return !p.key && p.token == last; });
        const QPoint at = render::scatterPosition(layout, point->x, point->y).toPoint();
        const auto hit = render::scatterPointAt(layout, scatter, at);
        QVERIFY(hit);
        QTest::mouseMove(view, at);
        QTRY_COMPARE(view->readout(), app::scatterReadout(scatter, scatter.points[*hit]));
        QCOMPARE(QToolTip::text(), view->readout());
        if (*hit == std::size_t(point - scatter.points.begin()))
            QVERIFY2(view->readout().startsWith(
                         QString::fromUtf8("Query “%1” (#%2), %3")
                             .arg(workspace->result()->tokens[last])
                             .arg(last)
                             .arg(analysis::tokenKindName(
                                 workspace->result()->queryKey->kinds[std::size_t(last)]))),
                     qPrintable(view->readout()));

        // A click selects that token as the query: the token strip and the scatter ring it.
        const int token = scatter.points[*hit].token;
        QTest::mouseClick(view, Qt::LeftButton, {}, at);
        QCOMPARE(workspace->state().query, token);
        QCOMPARE(workspace->tokenStrip()->selected(), token);
        QCOMPARE(std::get<render::ScatterFigure>(view->panels()->panels[0]).emphasisedToken, token);

        // A cell of the layer's head grid focuses its head.
        const auto grid = std::get<render::ScatterGridFigure>(view->panels()->panels[2]);
        const render::ScatterGridLayout gridLayout =
            render::layoutScatterGrid(qkPanelCell(view, 2), grid);
        QTest::mouseClick(view, Qt::LeftButton, {}, gridLayout.cells.at(3).center().toPoint());
        QCOMPARE(workspace->state().head, 3);
        QVERIFY(std::get<render::ScatterGridFigure>(view->panels()->panels[2]).selected == 3);
        QVERIFY(view->panels()->title.contains("head 3"));
    }

    void overviewPicksLayerAndHead() {
        app::MainWindow window({});
        window.resize(1300, 850);
        window.show();
        openGpt2ForQueryKey(window, "the cat sat on the mat");
        app::Workspace* workspace = window.workspace();
        QAction* open = nullptr;
        for (QAction* action : workspace->viewActions())
            if (action->text() == app::viewName(app::ViewKind::QkEmbedding)) open = action;
        QVERIFY(open);
        QCOMPARE(open->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_K));
        workspace->setView(app::ViewKind::QkGrid);
        const render::PanelsFigure* panels = qkPanels(workspace);
        QVERIFY(panels);
        const auto grid = std::get<render::ScatterGridFigure>(panels->panels.at(0));
        QCOMPARE(grid.rows, 2);
        QCOMPARE(grid.cols, 4);
        const render::ScatterGridLayout layout =
            render::layoutScatterGrid(qkPanelCell(workspace->figureView(), 0), grid);
        const QPoint cell = layout.cells.at(1 * 4 + 2).center().toPoint();
        QTest::mouseMove(workspace->figureView(), cell);
        QTRY_VERIFY(workspace->figureView()->readout().startsWith("L1 H2 · "));
        QTest::mouseClick(workspace->figureView(), Qt::LeftButton, {}, cell);
        QCOMPARE(workspace->state().layer, 1);
        QCOMPARE(workspace->state().head, 2);
        workspace->figureView()->grab().save(QString(HEADLIGHT_TEST_OUTPUT_DIR) +
                                             "/query_key_grid.png");
    }
};

HEADLIGHT_TEST_MAIN(TestQueryKeyView)
#include "test_query_key_view.moc"
