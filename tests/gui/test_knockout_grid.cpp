// The knockout grid of the variant dock (app/window/knockout_grid.h) on the zoo's rope recall
// model under the offscreen platform: a click knocks a head out and the readout shows the output
// change of that pass (the same KL and top-1 as app::runAblation on the model); arrows and Space
// toggle from the keyboard; the mode box picks mean, mean over a corpus (its head means
// computed on a worker with progress and cancel) and replace from another text, each giving
// the output change app::runAblation gives; undo and redo walk the toggles; the
// workspace's scenario carries them; the activation-patching dialog runs off the GUI thread and
// cancels; a model without a tied LM head says so.
#include "classroom.h"
#include "corpus_means_runner.h"
#include "figure_view.h"
#include "golden.h"
#include "knockout_grid.h"
#include "main_window.h"
#include "patching_dialog.h"
#include "text_input.h"
#include "variant_dock.h"
#include "zoo_models.h"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QProgressDialog>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace headlight;

namespace {
constexpr int kKnockoutWaitMs =
    60000; // a generous ceiling for a loaded CI machine, not a measurement

bool ranWithKnockouts(const app::Workspace* workspace, int heads) {
    const app::ForwardResult* r = workspace->result();
    return r && r->knockouts == workspace->knockouts() && int(r->knockouts.heads.size()) == heads;
}
} // namespace

class TestKnockoutGrid : public QObject {
    Q_OBJECT
    std::unique_ptr<app::MainWindow> window_;
    app::KnockoutGrid* grid_ = nullptr;
    app::Workspace* workspace_ = nullptr;

    void click(int layer, int head) {
        app::HeadToggles* toggles = grid_->toggles();
        QTest::mouseClick(toggles, Qt::LeftButton, {}, toggles->cellRect(layer, head).center());
    }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        window_ = std::make_unique<app::MainWindow>(app::LaunchOptions{});
        new app::Classroom(window_.get());
        window_->show();
        window_->openCheckpoint(test::zooModelsRoot() + "/rope");
        QTRY_VERIFY_WITH_TIMEOUT(window_->session().current(), kKnockoutWaitMs);
        workspace_ = window_->workspace();
        workspace_->setText("a3k7q1z9m4>k");
        QTRY_VERIFY_WITH_TIMEOUT(workspace_->result() && workspace_->result()->tokenCount() == 12,
                                 kKnockoutWaitMs);
        grid_ = window_->variantDock()->knockoutGrid();
        QCOMPARE(grid_->toggles()->sizeHint(), QSize(26 + 4 * 25, 13 + 2 * 25));
    }

    void aClickKnocksOutAndShowsTheOutputChange() {
        click(1, 1);
        QTRY_VERIFY_WITH_TIMEOUT(ranWithKnockouts(workspace_, 1), kKnockoutWaitMs);
        const std::vector<variants::HeadAblationSpec> expected{
            {1, 1, variants::AblationMode::Zero}};
        QCOMPARE(workspace_->knockouts().heads, expected);
        workspace_->runner().waitForIdle();
        const app::LoadedModel& loaded = *window_->session().current();
        const ModelInput input = app::prepareText(loaded.tokenizer.get(), workspace_->text()).input;
        const app::AblationEffect effect =
            app::runAblation(*loaded.model, input, {}, variants::interventionOf(expected));
        const app::ForwardResult& result = *workspace_->result();
        QCOMPARE(result.outputChange.size(), std::size_t(12));
        const app::PositionChange& last = effect.positions.back();
        QCOMPARE(result.outputChange.back().kl, last.kl);
        QCOMPARE(result.outputChange.back().ablatedTop, last.ablatedTop);
        QVERIFY(last.kl > 0.01);
        const QString text = grid_->readout()->text();
        QVERIFY2(text.contains(QStringLiteral("At token 11 “k”: KL(p_clean ‖ p_ablated) = %1 nats")
                                   .arg(last.kl, 0, 'g', 4)),
                 qPrintable(text));
        // A selected token moves the readout there.
        workspace_->selectQuery(10);
        QVERIFY2(grid_->readout()->text().contains(
                     QStringLiteral("At token 10 “&gt;”: KL(p_clean ‖ p_ablated) = %1 nats")
                         .arg(effect.positions[10].kl, 0, 'g', 4)),
                 qPrintable(grid_->readout()->text()));
        workspace_->selectQuery(-1);
    }

    void keyboardMeanUndoAndRedo() {
        QUndoStack* undo = window_->variantDock()->undoStack();
        grid_->modeBox()->setCurrentIndex(1); // mean
        grid_->toggles()->setFocus();
        QCOMPARE(grid_->toggles()->focusedHead(), (std::pair<int, int>{1, 1}));
        QTest::keyClick(grid_->toggles(), Qt::Key_Up);
        QTest::keyClick(grid_->toggles(), Qt::Key_Right);
        QTest::keyClick(grid_->toggles(), Qt::Key_Space);
        QTRY_VERIFY_WITH_TIMEOUT(ranWithKnockouts(workspace_, 2), kKnockoutWaitMs);
        const std::vector<variants::HeadAblationSpec> both{{1, 1, variants::AblationMode::Zero},
                                                           {0, 2, variants::AblationMode::Mean}};
        QCOMPARE(workspace_->knockouts().heads, both);
        QCOMPARE(workspace_->scenario().ablation, both);
        QCOMPARE(undo->undoText(), QStringLiteral("knock out head 0.2"));
        undo->undo();
        QCOMPARE(workspace_->knockouts().heads.size(), std::size_t(1));
        undo->undo();
        QVERIFY(workspace_->knockouts().heads.empty());
        QTRY_VERIFY_WITH_TIMEOUT(ranWithKnockouts(workspace_, 0), kKnockoutWaitMs);
        QVERIFY(workspace_->result()->outputChange.empty());
        QCOMPARE(grid_->readout()->text(),
                 QStringLiteral("Click heads to knock them out; the output change shows here."));
        undo->redo();
        undo->redo();
        QCOMPARE(workspace_->knockouts().heads, both);
        QTRY_VERIFY_WITH_TIMEOUT(ranWithKnockouts(workspace_, 2), kKnockoutWaitMs);
        click(1, 1); // a knocked-out head comes back
        QTRY_VERIFY_WITH_TIMEOUT(ranWithKnockouts(workspace_, 1), kKnockoutWaitMs);
        QCOMPARE(workspace_->knockouts().heads.front().layer, 0);
        grid_->modeBox()->setCurrentIndex(0);
    }

    void corpusMeanAndReplaceModes() {
        workspace_->setKnockouts({});
        QTRY_VERIFY_WITH_TIMEOUT(ranWithKnockouts(workspace_, 0), kKnockoutWaitMs);
        QTemporaryDir dir;
        const QStringList texts{"k7q1>q", "z9m4a3k7>a", "m4>m"};
        QFile corpus(dir.filePath("keys.txt"));
        QVERIFY(corpus.open(QIODevice::WriteOnly));
        corpus.write(texts.join('\n').toUtf8());
        corpus.close();
        QSignalSpy done(grid_->corpusMeansRunner(), &app::CorpusMeansRunner::finished);
        grid_->modeBox()->setCurrentIndex(2);
        QVERIFY(grid_->useCorpus(corpus.fileName()));
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, kKnockoutWaitMs);
        QVERIFY(grid_->corpusMeans());
        workspace_->runner().waitForIdle();
        const app::LoadedModel& loaded = *window_->session().current();
        const auto expected =
            app::corpusHeadMeans(*loaded.model, loaded.tokenizer.get(), {}, texts);
        int64_t tokens = 0;
        for (const QString& text : texts)
            tokens += int64_t(app::prepareText(loaded.tokenizer.get(), text).input.ids.size());
        QCOMPARE(grid_->corpusMeans()->positions, tokens);
        QCOMPARE(grid_->corpusMeans()->texts, 3);
        QVERIFY(test::maxAbsDiff(grid_->corpusMeans()->means, expected->means) == 0.0);
        QCOMPARE(grid_->modeNote()->text(),
                 QStringLiteral("Means over keys.txt: 3 texts, %1 tokens").arg(tokens));

        click(1, 0);
        QTRY_VERIFY_WITH_TIMEOUT(ranWithKnockouts(workspace_, 1), kKnockoutWaitMs);
        const std::vector<variants::HeadAblationSpec> corpusHead{
            {1, 0, variants::AblationMode::CorpusMean}};
        QCOMPARE(workspace_->knockouts().heads, corpusHead);
        workspace_->runner().waitForIdle();
        const ModelInput input = app::prepareText(loaded.tokenizer.get(), workspace_->text()).input;
        const auto klAtLast = [&](const std::vector<variants::HeadAblationSpec>& heads,
                                  const ModelInput* source) {
            return app::runAblation(*loaded.model, input, {},
                                    app::resolveAblations(*loaded.model, {}, heads, source,
                                                          int64_t(input.ids.size()), &*expected))
                .positions.back()
                .kl;
        };
        const double corpusKl = klAtLast(corpusHead, nullptr);
        QCOMPARE(workspace_->result()->outputChange.back().kl, corpusKl);
        QVERIFY(std::abs(corpusKl - klAtLast({{1, 0, variants::AblationMode::Mean}}, nullptr)) >
                1e-6);

        // Cancel: a long corpus stops between texts and keeps the means there were.
        QFile longCorpus(dir.filePath("long.txt"));
        QVERIFY(longCorpus.open(QIODevice::WriteOnly));
        longCorpus.write(QByteArray("a3k7q1z9m4b2c8d6e5f0>k\n").repeated(3000));
        longCorpus.close();
        const auto before = grid_->corpusMeans();
        QVERIFY(grid_->useCorpus(longCorpus.fileName()));
        QVERIFY(grid_->corpusMeansRunner()->progress());
        auto* cancel = grid_->corpusMeansRunner()->progress()->findChild<QPushButton*>();
        QVERIFY(cancel);
        QTest::mouseClick(cancel, Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, kKnockoutWaitMs);
        QVERIFY(!done.back().front().value<std::shared_ptr<const app::CorpusHeadMeans>>());
        QCOMPARE(grid_->corpusMeans(), before);
        QCOMPARE(grid_->modeBox()->currentIndex(), 2);

        grid_->modeBox()->setCurrentIndex(3);
        grid_->setReplaceSource("a3k5q1z9m4>k");
        click(0, 3);
        QTRY_VERIFY_WITH_TIMEOUT(ranWithKnockouts(workspace_, 2), kKnockoutWaitMs);
        QCOMPARE(workspace_->knockouts().source, QStringLiteral("a3k5q1z9m4>k"));
        QCOMPARE(grid_->modeNote()->text(), QStringLiteral("Outputs from “a3k5q1z9m4>k”"));
        const std::vector<variants::HeadAblationSpec> both{corpusHead.front(),
                                                           {0, 3, variants::AblationMode::Replace}};
        QCOMPARE(workspace_->knockouts().heads, both);
        workspace_->runner().waitForIdle();
        const ModelInput source = app::prepareText(loaded.tokenizer.get(), "a3k5q1z9m4>k").input;
        QCOMPARE(workspace_->result()->outputChange.back().kl, klAtLast(both, &source));
        window_->grab().save(QString(HEADLIGHT_TEST_OUTPUT_DIR) + "/knockout_corpus_mean.png");
        workspace_->setKnockouts({});
        grid_->modeBox()->setCurrentIndex(0);
    }

    // View ▸ Activation patching… on the worker thread: the heatmap holds what runPatching gives
    // for the same setup, and Cancel stops a run.
    void patchingDialogRunsAndCancels() {
        app::PatchingDialog* dialog = window_->patchingDialog();
        dialog->show();
        dialog->cleanEdit()->setText("a3k7q1z9m4>k");
        dialog->corruptEdit()->setText("a3k5q1z9m4>k");
        dialog->targetEdit()->setText("7");
        dialog->foilEdit()->setText("5");
        dialog->gridBox()->setCurrentIndex(1); // layers × heads
        QSignalSpy done(dialog, &app::PatchingDialog::finished);
        QTest::mouseClick(dialog->runButton(), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, kKnockoutWaitMs);
        QCOMPARE(done.front().front().toBool(), true);
        const auto& figure = std::get<render::HeatmapFigure>(dialog->figureView()->figure());
        QCOMPARE(figure.rows, 2);
        QCOMPARE(figure.cols, 4);
        workspace_->runner().waitForIdle();
        const app::LoadedModel& loaded = *window_->session().current();
        app::PatchSetup setup;
        setup.clean = app::prepareText(loaded.tokenizer.get(), "a3k7q1z9m4>k").input;
        setup.corrupt = app::prepareText(loaded.tokenizer.get(), "a3k5q1z9m4>k").input;
        setup.target = loaded.tokenizer->encode("7", std::nullopt, false).ids.front();
        setup.foil = loaded.tokenizer->encode("5", std::nullopt, false).ids.front();
        setup.grid = app::PatchGrid::LayersByHeads;
        const auto expected = app::runPatching(*loaded.model, setup, {});
        QVERIFY(expected);
        for (std::size_t i = 0; i < figure.values.size(); ++i)
            QCOMPARE(figure.values[i], float(expected->recovered[i]));
        QVERIFY(dialog->status()->text().startsWith("Logit difference 7 − 5: clean "));

        dialog->cleanEdit()->setText(QString("a3k7q1z9m4b2c8d6e5f0>k").repeated(2));
        dialog->corruptEdit()->setText(QString("a3k5q1z9m4b2c8d6e5f0>k").repeated(2));
        dialog->gridBox()->setCurrentIndex(0);
        QTest::mouseClick(dialog->runButton(), Qt::LeftButton);
        QVERIFY(dialog->running());
        QTest::mouseClick(dialog->cancelButton(), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, kKnockoutWaitMs);
        QCOMPARE(done.back().front().toBool(), false);
        QCOMPARE(dialog->status()->text(), QStringLiteral("Cancelled."));
        QCOMPARE(std::get<render::HeatmapFigure>(dialog->figureView()->figure()).cols, 4);

        dialog->corruptEdit()->setText("a3k5");
        QTest::mouseClick(dialog->runButton(), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 3, kKnockoutWaitMs);
        QVERIFY2(dialog->status()->text().contains("patching needs the same length"),
                 qPrintable(dialog->status()->text()));
        dialog->close();
    }

    void anEncoderSaysItHasNoLanguageModelHead() {
        int changed = 0;
        connect(workspace_, &app::Workspace::modelChanged, this, [&changed] { ++changed; });
        window_->openCheckpoint(test::zooModelsRoot() + "/encoder");
        QTRY_COMPARE_WITH_TIMEOUT(changed, 1, kKnockoutWaitMs);
        QVERIFY(workspace_->knockouts().heads.empty()); // another model's heads
        click(0, 0);
        QTRY_VERIFY_WITH_TIMEOUT(ranWithKnockouts(workspace_, 1), kKnockoutWaitMs);
        QCOMPARE(grid_->readout()->text(), QString::fromUtf8(app::noLanguageModelHeadReason()));
    }
};

HEADLIGHT_TEST_MAIN(TestKnockoutGrid)
#include "test_knockout_grid.moc"
