// The variant panel and the views it feeds, with the tiny BERT and GPT-2 checkpoints under the
// offscreen platform: a toggle changes the spec the workspace holds and the pixels, a choice the
// checkpoint cannot run is disabled with the engine's reason, undo and redo walk the specs back
// and forth, the sparsity view's dropped mass matches a hand computation, the position view
// follows the position option, and the early-exit and LSH views appear with their options.
#include "corpus_runner.h"
#include "figure_view.h"
#include "golden.h"
#include "main_window.h"
#include "sparsity_figure.h"
#include "text_input.h"
#include "variant_dock.h"
#include "variant_panel.h"
#include "zoo_models.h"

#include <QAbstractButton>
#include <QAction>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QJsonDocument>
#include <QPlainTextEdit>
#include <QProgressDialog>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <cmath>

using namespace headlight;

namespace {
constexpr int kWaitMs = 60000; // a generous ceiling for a loaded CI machine, not a measurement

// optionGroups() order: the panel's families.
constexpr int kKernel = 0, kMask = 1, kPosition = 5, kEarlyExit = 7, kRecurrence = 8;

int choiceIndex(int group, const QString& id) {
    const auto& choices = app::optionGroups()[std::size_t(group)].choices;
    for (std::size_t i = 0; i < choices.size(); ++i)
        if (choices[i].id == id) return int(i);
    return -1;
}

void open(app::MainWindow& window, const QString& model) {
    QSignalSpy shown(window.workspace(), &app::Workspace::resultShown);
    window.openCheckpoint(test::goldenRoot() + "/" + model);
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), kWaitMs);
}

// Picks a combo choice as a user would (the panel listens to `activated`).
void pick(app::VariantPanel* panel, int group, const QString& id) {
    QComboBox* combo = panel->comboOf(group);
    const int index = choiceIndex(group, id);
    combo->setCurrentIndex(index);
    Q_EMIT combo->activated(index);
}

// Waits until the views show a pass that ran with `spec`.
void waitForVariant(app::Workspace* workspace, const QJsonObject& spec) {
    QTRY_VERIFY_WITH_TIMEOUT(workspace->variantJson() == spec && workspace->result() &&
                                 !workspace->runner().busy() &&
                                 workspace->result()->serial == workspace->runner().latestRequest(),
                             kWaitMs);
}

// A click on the radio button's or check box's indicator, as a user makes it.
void clickChoice(app::VariantPanel* panel, int group, const QString& id) {
    QAbstractButton* button = panel->buttonOf(group, choiceIndex(group, id));
    QTest::mouseClick(button, Qt::LeftButton, {}, QPoint(8, button->height() / 2));
}

QImage grabView(app::Workspace* workspace) {
    return workspace->figureView()->grab().toImage();
}

bool isEnabled(QComboBox* combo, int index) {
    return qobject_cast<QStandardItemModel*>(combo->model())->item(index)->isEnabled();
}

void saveShot(QWidget* widget, const QString& name) {
    widget->grab().save(QString(HEADLIGHT_TEST_OUTPUT_DIR) + "/" + name + ".png");
}
} // namespace

class TestVariantPanel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void togglingAnOptionChangesTheSpecAndThePixels() {
        app::MainWindow window({});
        window.resize(1500, 950);
        window.show();
        open(window, "bert");
        app::Workspace* workspace = window.workspace();
        app::VariantPanel* panel = window.variantDock()->panel();
        const QImage before = grabView(workspace);
        QVERIFY(workspace->variantJson().isEmpty());

        pick(panel, kMask, "longformer");
        const QJsonObject expected{{"mask", QJsonObject{{"preset", "longformer"}, {"window", 2}}}};
        waitForVariant(workspace, expected);
        QVERIFY(workspace->variant().mask.has_value());
        QCOMPARE(workspace->result()->variant.mask->preset, std::string("longformer"));
        QVERIFY(workspace->result()->internals.count("nominal_mask"));
        QVERIFY(grabView(workspace) != before);
        const auto json =
            QJsonDocument::fromJson(window.variantDock()->jsonView()->toPlainText().toUtf8());
        QCOMPARE(json.object(), expected);

        // The parameter spin box edits the same spec.
        panel->parameterOf(kMask)->setValue(4);
        waitForVariant(workspace, {{"mask", QJsonObject{{"preset", "longformer"}, {"window", 4}}}});
        saveShot(&window, "variant_longformer_window");
    }

    void theFirstKernelChoiceNamesTheCheckpointsOwn() {
        app::MainWindow window({});
        window.show();
        open(window, "gpt2");
        QComboBox* kernels = window.variantDock()->panel()->comboOf(kKernel);
        QCOMPARE(kernels->itemText(0), QString("Exact softmax (the checkpoint's own)"));
        QSignalSpy shown(window.workspace(), &app::Workspace::resultShown);
        window.openCheckpoint(test::zooModelsRoot() + "/linformer");
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), kWaitMs);
        QCOMPARE(kernels->itemText(0), QString("Linformer (the checkpoint's own)"));
    }

    void aChoiceThatCannotRunIsDisabledWithTheReason() {
        app::MainWindow window({});
        window.show();
        open(window, "gpt2");
        app::VariantPanel* panel = window.variantDock()->panel();
        QComboBox* kernels = panel->comboOf(kKernel);
        const int linformer = choiceIndex(kKernel, "linformer");
        QVERIFY(!isEnabled(kernels, linformer));
        QVERIFY(panel->unavailableReason(kKernel, linformer).contains("causal"));
        const QString tip = kernels->itemData(linformer, Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains("Not available here") && tip.contains("causal"), qPrintable(tip));
        QVERIFY(tip.contains("Wang et al. 2020a") && tip.contains("approximate"));
        QVERIFY(isEnabled(kernels, choiceIndex(kKernel, "lsh")));

        // With the LSH kernel on, the score-matrix options say why they cannot join it.
        pick(panel, kKernel, "lsh");
        waitForVariant(window.workspace(), panel->spec());
        QAbstractButton* alibi = panel->buttonOf(kPosition, choiceIndex(kPosition, "alibi"));
        QVERIFY(!alibi->isEnabled());
        QVERIFY2(alibi->toolTip().contains("never forms the score matrix"),
                 qPrintable(alibi->toolTip()));
        QVERIFY(!isEnabled(panel->comboOf(kMask), choiceIndex(kMask, "longformer")));
        saveShot(&window, "variant_disabled_reasons");
    }

    // The Transformer-XL toggle on GPT-2: segments of 16 with the memory its spin box sets; the
    // encoder BERT cannot take it and says why.
    void recurrenceToggleSetsSegmentAndMemory() {
        app::MainWindow window({});
        window.resize(1500, 950);
        window.show();
        open(window, "gpt2");
        app::Workspace* workspace = window.workspace();
        app::VariantPanel* panel = window.variantDock()->panel();
        clickChoice(panel, kRecurrence, "{}");
        waitForVariant(workspace, {{"recurrence", QJsonObject{{"segment", 16}, {"memory", 16}}}});
        QVERIFY(workspace->result()->internals.count("segment"));
        panel->parameterOf(kRecurrence)->setValue(32);
        waitForVariant(workspace, {{"recurrence", QJsonObject{{"segment", 16}, {"memory", 32}}}});
        saveShot(&window, "variant_recurrence");

        app::MainWindow encoder({});
        encoder.show();
        open(encoder, "bert");
        QAbstractButton* toggle = encoder.variantDock()->panel()->buttonOf(kRecurrence, 1);
        QVERIFY(!toggle->isEnabled());
        QVERIFY2(toggle->toolTip().contains("not causal"), qPrintable(toggle->toolTip()));
    }

    void undoAndRedoRestoreTheSpecAndThePixels() {
        app::MainWindow window({});
        window.resize(1500, 950); // room for the view however the status line wraps
        window.show();
        open(window, "bert");
        app::Workspace* workspace = window.workspace();
        app::VariantDock* dock = window.variantDock();
        waitForVariant(workspace, {});
        const QImage vanilla = grabView(workspace);

        clickChoice(dock->panel(), kPosition, "sinusoidal");
        const QJsonObject sinusoidal{{"position", "sinusoidal"}};
        waitForVariant(workspace, sinusoidal);
        const QImage changed = grabView(workspace);
        QVERIFY(changed != vanilla);

        dock->undoAction()->trigger();
        waitForVariant(workspace, {});
        QCOMPARE(grabView(workspace), vanilla);
        QVERIFY(
            dock->panel()->buttonOf(kPosition, choiceIndex(kPosition, "checkpoint"))->isChecked());
        QCOMPARE(dock->undoAction()->shortcut(), QKeySequence(QKeySequence::Undo));
        QCOMPARE(dock->redoAction()->shortcut(), QKeySequence("Ctrl+Shift+Z"));

        dock->redoAction()->trigger();
        waitForVariant(workspace, sinusoidal);
        QCOMPARE(grabView(workspace), changed);
    }

    void parameterNudgesUndoAsOneStep() {
        app::MainWindow window({});
        window.show();
        open(window, "bert");
        app::VariantDock* dock = window.variantDock();
        pick(dock->panel(), kMask, "longformer");
        for (int window_ = 3; window_ <= 5; ++window_)
            dock->panel()->parameterOf(kMask)->setValue(window_);
        QCOMPARE(dock->undoStack()->count(), 2);
        dock->undoAction()->trigger();
        QCOMPARE(dock->panel()->spec(),
                 QJsonObject({{"mask", QJsonObject{{"preset", "longformer"}, {"window", 2}}}}));
    }

    void sparsityMassOutsideMatchesAHandComputation() {
        app::MainWindow window({});
        window.resize(1500, 950);
        window.show();
        open(window, "bert");
        app::Workspace* workspace = window.workspace();
        workspace->setView(app::ViewKind::Sparsity);
        pick(window.variantDock()->panel(), kMask, "longformer");
        waitForVariant(workspace, window.variantDock()->panel()->spec());
        QTRY_VERIFY_WITH_TIMEOUT(!workspace->result()->vanillaAttention.empty(), kWaitMs);
        const app::ForwardResult& result = *workspace->result();

        // By hand: the vanilla pass, and the mask the longformer pass obeyed.
        const app::LoadedModel& model = *window.session().current();
        const ModelInput input = app::prepareText(model.tokenizer.get(), workspace->text()).input;
        const Tensor vanilla = model.model->forward(input).stackedProbabilities();
        CaptureRequest capture;
        capture.internals = true;
        const Tensor mask =
            model.model->forward(input, capture, workspace->variant()).internals.at("mask");
        const int64_t t = int64_t(input.ids.size()), heads = vanilla.dim(1);
        const app::SparsityNumbers numbers = app::sparsityNumbers(result, 0);
        for (int64_t h = 0; h < heads; ++h) {
            double outside = 0.0;
            for (int64_t i = 0; i < t; ++i)
                for (int64_t j = 0; j < t; ++j)
                    if (mask.data()[((h % mask.dim(0)) * t + i) * t + j] == 0.0f)
                        outside += vanilla.data()[((0 * heads + h) * t + i) * t + j];
            outside /= double(t);
            QVERIFY(outside > 0.01); // a window of 2 drops real mass on this text
            QVERIFY2(std::abs(numbers.massOutside[std::size_t(h)] - outside) < 1e-5,
                     qPrintable(QString("head %1: %2 vs %3")
                                    .arg(h)
                                    .arg(numbers.massOutside[std::size_t(h)])
                                    .arg(outside)));
        }
        const render::PanelsFigure* panels = workspace->figureView()->panels();
        QVERIFY(panels);
        const QString percent = QString::number(100.0 * numbers.massOutside[0], 'f', 1) + "%";
        QVERIFY2(panels->caption.contains(percent), qPrintable(panels->caption));
        QCOMPARE(panels->panels.size(), std::size_t(4));
        saveShot(&window, "sparsity_longformer");
    }

    void positionViewFollowsThePositionOption() {
        app::MainWindow window({});
        window.resize(1500, 950);
        window.show();
        open(window, "bert");
        app::Workspace* workspace = window.workspace();
        workspace->setView(app::ViewKind::Positions);
        const render::PanelsFigure* learned = workspace->figureView()->panels();
        QVERIFY(learned && learned->title.contains("learned"));
        const QImage learnedPixels = grabView(workspace);
        saveShot(&window, "positions_learned");

        clickChoice(window.variantDock()->panel(), kPosition, "sinusoidal");
        waitForVariant(workspace, {{"position", "sinusoidal"}});
        QVERIFY(workspace->figureView()->panels()->title.contains("sinusoidal"));
        QVERIFY(grabView(workspace) != learnedPixels);

        clickChoice(window.variantDock()->panel(), kPosition, "alibi");
        waitForVariant(workspace, {{"position", "alibi"}});
        QVERIFY(workspace->figureView()->panels()->title.contains("ALiBi"));
        saveShot(&window, "positions_alibi");
    }

    void ropeIsLabelledOnLlama() {
        app::MainWindow window({});
        window.show();
        open(window, "llama");
        window.workspace()->setView(app::ViewKind::Positions);
        QVERIFY(window.workspace()->figureView()->panels()->title.contains("RoPE"));
    }

    void earlyExitViewAppearsWithAnEarlyExitSpec() {
        app::MainWindow window({});
        window.resize(1500, 950);
        window.show();
        open(window, "gpt2");
        app::Workspace* workspace = window.workspace();
        workspace->setView(app::ViewKind::EarlyExit);
        const render::PanelsFigure* none = workspace->figureView()->panels();
        QVERIFY(std::holds_alternative<render::NotePanel>(none->panels.at(0)));
        QVERIFY(std::get<render::NotePanel>(none->panels[0]).message.contains("Early exit"));

        pick(window.variantDock()->panel(), kEarlyExit, "entropy");
        waitForVariant(workspace, window.variantDock()->panel()->spec());
        const render::PanelsFigure* exits = workspace->figureView()->panels();
        QCOMPARE(exits->panels.size(), std::size_t(2));
        const auto& bars = std::get<render::BarChartFigure>(exits->panels[0]);
        QCOMPARE(int(bars.values.size()), workspace->tokenCount());
        QVERIFY(std::holds_alternative<render::HeatmapFigure>(exits->panels[1]));
        saveShot(&window, "early_exit_entropy");
    }

    void lshViewShowsBucketsWithTheLshKernel() {
        app::MainWindow window({});
        window.resize(1500, 950);
        window.show();
        open(window, "bert");
        app::Workspace* workspace = window.workspace();
        workspace->setView(app::ViewKind::LshBuckets);
        QVERIFY(std::holds_alternative<render::NotePanel>(
            workspace->figureView()->panels()->panels.at(0)));
        pick(window.variantDock()->panel(), kKernel, "lsh");
        waitForVariant(workspace, window.variantDock()->panel()->spec());
        const auto& grid =
            std::get<render::CategoryGridFigure>(workspace->figureView()->panels()->panels.at(1));
        QCOMPARE(grid.cols, workspace->tokenCount());
        QCOMPARE(grid.cellText.size(), qsizetype(grid.rows * grid.cols));
        saveShot(&window, "lsh_buckets");
    }

    void savedSpecParsesBack() {
        app::MainWindow window({});
        open(window, "bert");
        pick(window.variantDock()->panel(), kMask, "bigbird");
        QTemporaryDir dir;
        const QString path = dir.filePath("variant.json");
        QVERIFY(window.variantDock()->saveSpec(path));
        const variants::VariantSpec spec = variants::loadVariantSpec(path.toStdString());
        QCOMPARE(spec.mask->preset, std::string("bigbird"));
        QVERIFY(!window.variantDock()->saveSpec(dir.filePath("missing/dir/x.json")));
    }

    void corpusViolinsPoolEveryText() {
        app::MainWindow window({});
        window.show();
        open(window, "gpt2");
        app::Workspace* workspace = window.workspace();
        workspace->setView(app::ViewKind::EntropyViolins);
        QSignalSpy finished(window.corpusRunner(), &app::CorpusRunner::finished);
        QVERIFY(window.corpusRunner()->start({"The cat sat.", "A dog ran far away.", "Hi"}));
        QVERIFY(finished.wait(kWaitMs));
        QCOMPARE(finished.first().at(0).value<std::size_t>(), std::size_t(3));
        const auto& violins = std::get<render::ViolinFigure>(workspace->figureView()->figure());
        QVERIFY2(violins.title.contains("corpus of 3 texts"), qPrintable(violins.title));
        window.corpusRunner()->clearAction()->trigger();
        QVERIFY(!std::get<render::ViolinFigure>(workspace->figureView()->figure())
                     .title.contains("corpus"));
    }

    void corpusCanBeCancelled() {
        app::MainWindow window({});
        window.show();
        open(window, "gpt2");
        QSignalSpy finished(window.corpusRunner(), &app::CorpusRunner::finished);
        QVERIFY(window.corpusRunner()->start(QStringList(200, "A fairly long sentence to run.")));
        QTest::mouseClick(window.corpusRunner()->progress()->findChild<QPushButton*>(),
                          Qt::LeftButton);
        QVERIFY(finished.wait(kWaitMs));
        QVERIFY(finished.first().at(2).toBool());
        QVERIFY(finished.first().at(0).value<std::size_t>() < 200);
        // The runner is live again: typing still runs passes.
        QSignalSpy shown(window.workspace(), &app::Workspace::resultShown);
        window.workspace()->setText("Again");
        QVERIFY(shown.wait(kWaitMs));
    }
};

HEADLIGHT_TEST_MAIN(TestVariantPanel)
#include "test_variant_panel.moc"
