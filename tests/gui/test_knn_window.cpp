// The kNN-LM view in the window, on the tiny GPT-2 with the datastore of tests/data/knn: the
// neighbour grid lists k neighbours with the datastore text around each, the bars show the scored
// token's p_LM, p_kNN and p_mix, and moving the λ slider re-mixes the bars (p_mix = λ·p_kNN +
// (1 − λ)·p_LM) without a new pass; File ▸ Build kNN datastore from text file… builds behind a
// progress dialog, installs the store and points the variant at it, and a cancelled build keeps
// the datastore that was there.
#include "figure_view.h"
#include "golden.h"
#include "knn_datastore_builder.h"
#include "knn_figure.h"
#include "knn_readout.h"
#include "main_window.h"
#include "temp_files.h"
#include "variant_dock.h"
#include "variant_panel.h"

#include <QMenuBar>
#include <QProgressDialog>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QTest>
#include <cmath>

using namespace headlight;

namespace {
constexpr int kKnnWaitMs = 60000; // a generous ceiling for a loaded CI machine, not a measurement
const QString kKnnText = QStringLiteral(HEADLIGHT_TEST_DATA "/knn/datastore.txt");

QJsonObject knnVariant(const QString& datastore) {
    return {{"knn", QJsonObject{{"datastore", datastore}, {"k", 4}, {"lambda", 0.25}}}};
}

// Opens the tiny GPT-2 with the kNN-LM variant and the kNN-LM view, and waits for its pass.
void openKnnView(app::MainWindow& window) {
    app::Workspace* workspace = window.workspace();
    QSignalSpy shown(workspace, &app::Workspace::resultShown);
    window.openCheckpoint(test::goldenRoot() + "/gpt2");
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), kKnnWaitMs);
    workspace->setView(app::ViewKind::KnnNeighbours);
    shown.clear();
    window.variantDock()->apply(knnVariant(kKnnText));
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty() && workspace->result()->knnStore, kKnnWaitMs);
}

const render::PanelsFigure& shownPanels(app::Workspace* workspace) {
    return *workspace->figureView()->panels();
}

QAction* knnMenuAction(QMenuBar* bar, const QString& name) {
    for (QAction* menu : bar->actions())
        for (QAction* action : menu->menu() ? menu->menu()->actions() : QList<QAction*>{})
            if (action->objectName() == name) return action;
    return nullptr;
}
} // namespace

class TestKnnWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void neighboursAndBarsFollowTheSlider() {
        app::MainWindow window({});
        window.resize(1400, 900);
        window.show();
        openKnnView(window);
        app::Workspace* workspace = window.workspace();
        QSlider* slider = workspace->knnLambdaSlider();
        QVERIFY(slider->isVisible());
        QCOMPARE(slider->value(), 25);
        workspace->selectQuery(2);
        const app::ForwardResult& result = *workspace->result();
        const auto& panels = shownPanels(workspace).panels;
        QCOMPARE(panels.size(), std::size_t(3));
        const auto& grid = std::get<render::CategoryGridFigure>(panels[0]);
        QCOMPARE(grid.rows, 4);
        const std::vector<app::KnnNeighbour> neighbours = app::knnNeighbours(result, 2);
        for (int r = 0; r < grid.rows; ++r) {
            // The stored next token sits after kKnnContextBefore context columns.
            const QString next = grid.cellText[r * grid.cols + app::kKnnContextBefore];
            QCOMPARE(next, result.knnStore->label(neighbours[std::size_t(r)].row + 1));
            QVERIFY2(grid.rowLabels[r].startsWith(QString::number(r + 1) + " · d "),
                     qPrintable(grid.rowLabels[r]));
        }
        const auto bars = [&] {
            return std::get<render::BarChartFigure>(shownPanels(workspace).panels[2]).values;
        };
        const std::vector<float> before = bars();
        QVERIFY(std::abs(before[2] - (0.25 * before[1] + 0.75 * before[0])) < 1e-6);
        const quint64 request = workspace->runner().latestRequest();
        slider->setValue(90);
        const std::vector<float> after = bars();
        QCOMPARE(after[0], before[0]);
        QCOMPARE(after[1], before[1]);
        QVERIFY(std::abs(after[2] - (0.9 * before[1] + 0.1 * before[0])) < 1e-6);
        QVERIFY(std::get<render::BarChartFigure>(shownPanels(workspace).panels[2])
                    .labels[2]
                    .contains("0.90"));
        QVERIFY(shownPanels(workspace).caption.contains("λ = 0.90"));
        QCOMPARE(workspace->runner().latestRequest(), request); // no pass ran
        workspace->figureView()->grab().save(QString(HEADLIGHT_TEST_OUTPUT_DIR) + "/knn_view.png");
    }

    void buildingADatastoreRunsWithIt() {
        app::MainWindow window({});
        window.show();
        openKnnView(window);
        app::Workspace* workspace = window.workspace();
        auto* builder = window.findChild<app::KnnDatastoreBuilder*>();
        QVERIFY(builder);
        QCOMPARE(knnMenuAction(window.menuBar(), "buildKnnDatastore"), builder->buildAction());
        test::ScratchDir dir;
        const QString text = dir.filePath("lighthouse.txt");
        test::writeFile(text, "The keeper of the lighthouse lit the lamp at dusk every night, and "
                              "the ships that passed the rocks saw the lamp and sailed on.");
        QSignalSpy finished(builder, &app::KnnDatastoreBuilder::finished);
        QSignalSpy shown(workspace, &app::Workspace::resultShown);
        QVERIFY(builder->start(text));
        QVERIFY(builder->progress());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kKnnWaitMs);
        QCOMPARE(finished.front()[0].toBool(), true);
        QCOMPARE(workspace->runner().knnCache().current()->path, text.toStdString());
        QCOMPARE(window.variantDock()->panel()->spec()["knn"].toObject()["datastore"].toString(),
                 text);
        QCOMPARE(window.variantDock()->panel()->spec()["knn"].toObject()["k"].toInt(), 4);
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty() && workspace->result()->knnStore &&
                                     workspace->result()->knnStore->path == text.toStdString(),
                                 kKnnWaitMs);
        QCOMPARE(workspace->view(), app::ViewKind::KnnNeighbours);
        for (const app::KnnNeighbour& n : app::knnNeighbours(*workspace->result(), 0))
            QVERIFY(n.row < workspace->result()->knnStore->datastore.size());
    }

    void aCancelledBuildKeepsTheDatastore() {
        app::MainWindow window({});
        window.show();
        openKnnView(window);
        app::Workspace* workspace = window.workspace();
        const auto before = workspace->runner().knnCache().current();
        QVERIFY(before);
        auto* builder = window.findChild<app::KnnDatastoreBuilder*>();
        test::ScratchDir dir;
        const QString text = dir.filePath("other.txt");
        test::writeFile(text, QByteArray("Another text for another datastore. ").repeated(40));
        QSignalSpy finished(builder, &app::KnnDatastoreBuilder::finished);
        QVERIFY(builder->start(text));
        // As a user does: the dialog's Cancel button.
        auto* cancel = builder->progress()->findChild<QPushButton*>();
        QVERIFY(cancel);
        QTest::mouseClick(cancel, Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kKnnWaitMs);
        QCOMPARE(finished.front()[0].toBool(), false);
        QCOMPARE(finished.front()[2].toString(), QString());
        QCOMPARE(workspace->runner().knnCache().current(), before);
        QCOMPARE(window.variantDock()->panel()->spec()["knn"].toObject()["datastore"].toString(),
                 kKnnText);
        QVERIFY(!builder->running());
    }
};

HEADLIGHT_TEST_MAIN(TestKnnWindow)
#include "test_knn_window.moc"
