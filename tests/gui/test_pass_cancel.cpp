// A pass superseded by a newer request, or cancelled from the window (Esc: "Cancel the running
// pass"), stops between layers instead of running to its end: on a random BERT-base-sized model
// (tests/bench/bert_base.h), whose 512-token pass is long enough to be caught in flight, the
// newer request's result is the only one delivered, the stopped pass reports fewer than its 12
// layers, and a cancelled pass delivers nothing and says so.
#include "../bench/bert_base.h"
#include "workspace.h"

#include <QAction>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

using namespace headlight;

namespace {
constexpr int kCancelWaitMs = 120000; // a ceiling for a loaded CI machine, not a measurement

std::shared_ptr<const app::LoadedModel> bertBaseToCancel() {
    auto model = std::make_shared<app::LoadedModel>();
    model->folder = QStringLiteral("random-bert-base");
    model->backend = makeCpuBackend();
    const ModelSpec spec = bench::bertBase();
    model->model =
        std::make_unique<TransformerModel>(spec, bench::randomBertWeights(spec), *model->backend);
    return model;
}

// `count` token ids as the text of a checkpoint without a tokenizer.
QString cancelIdsText(int count, int salt) {
    QStringList ids;
    for (int i = 0; i < count; ++i)
        ids << QString::number(1000 + (i * 31 + salt) % 20000);
    return ids.join(' ');
}

int layersReportedBy(const QSignalSpy& progress) {
    return int(progress.size());
}
} // namespace

class TestPassCancel : public QObject {
    Q_OBJECT
    std::shared_ptr<const app::LoadedModel> model_;

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        model_ = bertBaseToCancel();
    }

    void newerRequestStopsThePassInFlight() {
        app::ForwardRunner runner;
        runner.setModel(model_);
        QSignalSpy progress(&runner, &app::ForwardRunner::progress);
        QSignalSpy finished(&runner, &app::ForwardRunner::finished);
        QSignalSpy failed(&runner, &app::ForwardRunner::failed);
        runner.runNow(cancelIdsText(512, 0));
        QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty(), kCancelWaitMs);
        const QString newer = cancelIdsText(16, 1);
        runner.runNow(newer);
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() && !runner.busy(), kCancelWaitMs);
        QCOMPARE(finished.size(), 1);
        QVERIFY(failed.isEmpty());
        QCOMPARE(finished[0][0].value<std::shared_ptr<const app::ForwardResult>>()->text, newer);
        // The newer pass ran its 12 layers; the first stopped before its 12.
        QVERIFY2(layersReportedBy(progress) < 24,
                 qPrintable(QString::number(layersReportedBy(progress))));
    }

    void escapeCancelsThePass() {
        app::Workspace workspace(new QLabel);
        workspace.setModel(model_);
        app::ForwardRunner& runner = workspace.runner();
        QTRY_VERIFY_WITH_TIMEOUT(!runner.busy(), kCancelWaitMs);
        QSignalSpy progress(&runner, &app::ForwardRunner::progress);
        QSignalSpy finished(&runner, &app::ForwardRunner::finished);
        QSignalSpy cancelled(&runner, &app::ForwardRunner::cancelled);
        workspace.setText(cancelIdsText(512, 2));
        runner.runNow(workspace.text());
        QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty(), kCancelWaitMs);
        QAction* cancel = nullptr;
        for (QAction* action : workspace.navigationActions())
            if (action->text() == "Cancel the running pass") cancel = action;
        QVERIFY(cancel);
        QCOMPARE(cancel->shortcut(), QKeySequence(Qt::Key_Escape));
        cancel->trigger();
        QCOMPARE(cancelled.size(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(!runner.busy(), kCancelWaitMs);
        QTest::qWait(2 * app::ForwardRunner::kDebounceMs); // nothing pending starts afterwards
        QVERIFY(!runner.busy());
        QVERIFY(finished.isEmpty());
        QVERIFY2(layersReportedBy(progress) < 12,
                 qPrintable(QString::number(layersReportedBy(progress))));
    }
};

HEADLIGHT_TEST_MAIN(TestPassCancel)
#include "test_pass_cancel.moc"
