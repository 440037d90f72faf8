// A long session holds: the window driven the way a class or a long afternoon drives it, for
// HEADLIGHT_SOAK_ROUNDS rounds (60 here; tools/soak.sh runs 1,000 with a 1B-shaped checkpoint in
// HEADLIGHT_SOAK_LARGE_MODEL=1b). Each round toggles a variant, changes the view and the head and
// waits for the pass; every tenth switches between the zoo's pre_ln and the larger model (the
// golden Llama here); every fifteenth opens a built-in lesson and steps through it. No error
// dialog appears, every pass shows, and once every kind of action has run (the warm-up) the
// resident memory, at the same model, grows by at most 5 %.
#include "classroom.h"
#include "golden.h"
#include "main_window.h"
#include "model/transformer.h"
#include "model_session.h"
#include "scene_files.h"
#include "sparse_llama.h"
#include "zoo_models.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QMessageBox>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <malloc.h>

using namespace headlight;

namespace {
constexpr int kSoakWaitMs = 120000; // a ceiling for a loaded machine, not a measurement
constexpr double kSoakGrowth = 0.05;

int soakRounds() {
    const int given = qEnvironmentVariableIntValue("HEADLIGHT_SOAK_ROUNDS");
    return given > 0 ? given : 60;
}

app::LaunchOptions soakOptions() {
    app::LaunchOptions options;
    options.backend = BackendKind::Cpu; // the default on lavapipe too (README)
    return options;
}

// The golden Llama, a folder given in HEADLIGHT_SOAK_LARGE_MODEL, or with "1b" a
// Llama-3.2-1B-shaped sparse BF16 checkpoint (support/sparse_llama.h, 2.5 GB) written into
// `scratch`.
QString largeModel(test::ScratchDir& scratch) {
    const QString given = qEnvironmentVariable("HEADLIGHT_SOAK_LARGE_MODEL");
    if (given.isEmpty()) return test::goldenRoot() + "/llama";
    if (given != QLatin1String("1b")) return given;
    const QString folder =
        test::writeSparseLlama(scratch, test::kLlama1B, 2, test::Fill::RandomAttention);
    for (const char* name : {"tokenizer.json", "tokenizer_config.json"})
        QFile::copy(test::goldenRoot() + "/llama/" + name, folder + "/" + name);
    return folder;
}

// Resident memory in kB (VmRSS), after handing freed heap back to the system so that the
// allocator's caches do not count as growth.
long residentKb() {
    malloc_trim(0);
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly)) return -1;
    for (const QByteArray& line : status.readAll().split('\n'))
        if (line.startsWith("VmRSS:")) return line.mid(6).trimmed().split(' ').first().toLong();
    return -1;
}

// Variants a user toggles on a causal model: none, a band, a sink softmax, sigmoid attention,
// RealFormer's residual scores.
QJsonObject soakVariant(int round) {
    static const char* const kSpecs[] = {
        "{}",
        R"({"mask": {"preset": "longformer", "window": 4, "dilation": 1, "global": [0]}})",
        R"({"attention_rule": {"kind": "sink_softmax", "sink": 0}})",
        R"({"attention_rule": {"kind": "sigmoid"}})",
        R"({"prior": {"kind": "residual"}})",
    };
    return QJsonDocument::fromJson(kSpecs[round % std::size(kSpecs)]).object();
}

class SoakSession {
public:
    SoakSession()
        : window_(soakOptions())
        , classroom_(new app::Classroom(&window_)) {
        window_.resize(1280, 800);
        window_.show();
    }

    app::MainWindow& window() { return window_; }
    app::Workspace* workspace() { return window_.workspace(); }

    // Opens `folder` and waits for its first pass; a folder already open (a lesson's step may
    // have opened it) is kept as it is.
    bool open(const QString& folder) {
        const auto model = workspace()->sharedModel();
        if (model && QDir(model->folder) == QDir(folder))
            return QTest::qWaitFor([&] { return workspace()->result() != nullptr; }, kSoakWaitMs);
        QSignalSpy shown(workspace(), &app::Workspace::resultShown);
        window_.openCheckpoint(folder);
        return shown.wait(kSoakWaitMs) || !shown.isEmpty();
    }

    // One round: a variant, a view, a head; false when no pass showed.
    bool round(int index) {
        QSignalSpy shown(workspace(), &app::Workspace::resultShown);
        workspace()->setVariant(soakVariant(index));
        if (shown.isEmpty() && !shown.wait(kSoakWaitMs)) return false;
        const auto view = app::ViewKind(index % app::kAllViewCount);
        workspace()->setView(view);
        if (workspace()->view() != view) return false;
        const ModelSpec& spec = workspace()->sharedModel()->model->spec();
        const int layers = spec.layers, heads = spec.heads;
        workspace()->selectHead(index % layers, (index / layers) % heads);
        return QTest::qWaitFor([&] { return !workspace()->drawing(); }, kSoakWaitMs);
    }

    // A built-in lesson opened and stepped through its first two steps.
    bool lesson(int index) {
        const QStringList lessons = app::builtinLessons();
        if (!classroom_->openFile(lessons[index % lessons.size()])) return false;
        for (int step = 0; step < 2; ++step) {
            classroom_->goToStep(step);
            if (!QTest::qWaitFor([&] { return !classroom_->sceneLoading(); }, kSoakWaitMs))
                return false;
        }
        return true;
    }

    // Where the session stands, for a failure's message.
    QString describe(int round) {
        const auto model = workspace()->sharedModel();
        return QStringLiteral("round %1: model %2, %3, lesson loading %4")
            .arg(round)
            .arg(model ? model->folder : QStringLiteral("none"))
            .arg(workspace()->result() ? QStringLiteral("a result shown")
                                       : QStringLiteral("no result"))
            .arg(classroom_->sceneLoading());
    }

    // Any error dialog the window raised (a modal QMessageBox), closed, with its text.
    QString errorShown() {
        for (QWidget* widget : QApplication::topLevelWidgets())
            if (auto* box = qobject_cast<QMessageBox*>(widget); box && box->isVisible()) {
                const QString text = box->text();
                box->close();
                return text;
            }
        return {};
    }

private:
    app::MainWindow window_;
    app::Classroom* classroom_;
};
} // namespace

class TestSoak : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void aLongSessionHolds() {
        SoakSession session;
        QVERIFY(QTest::qWaitForWindowExposed(&session.window()));
        const QString zoo = test::zooModelsRoot() + "/pre_ln";
        test::ScratchDir scratch;
        const QString large = largeModel(scratch);
        QVERIFY(session.open(zoo));
        QSignalSpy passes(session.workspace(), &app::Workspace::resultShown);
        const int rounds = soakRounds();
        const int warmUp = 30; // a model switch, a lesson and every variant have run by then
        long afterWarmUp = -1;
        bool onZoo = true;
        for (int round = 0; round < rounds; ++round) {
            if (round % 10 == 9) {
                onZoo = !onZoo;
                QVERIFY2(session.open(onZoo ? zoo : large), qPrintable(QString::number(round)));
            }
            if (round % 15 == 14) {
                QVERIFY2(session.lesson(round / 15), qPrintable(QString::number(round)));
                QVERIFY2(session.open(onZoo ? zoo : large), qPrintable(session.describe(round)));
            }
            QVERIFY2(session.round(round), qPrintable(QStringLiteral("round %1").arg(round)));
            const QString error = session.errorShown();
            QVERIFY2(error.isEmpty(),
                     qPrintable(QStringLiteral("round %1: %2").arg(round).arg(error)));
            if (round % 100 == 99)
                qInfo("soak: round %d on %s, resident %ld kB", round + 1,
                      onZoo ? "pre_ln" : "the Llama", residentKb());
            // Measured at the first round on pre_ln once the warm-up is over.
            if (round >= warmUp - 1 && afterWarmUp < 0 && onZoo) afterWarmUp = residentKb();
        }
        QVERIFY(session.open(zoo));
        QVERIFY(session.round(0));
        const long atEnd = residentKb();
        qInfo("soak: %d rounds, %lld passes shown, resident %ld kB after warm-up, %ld kB at the "
              "end (%+.1f %%)",
              rounds, passes.count(), afterWarmUp, atEnd,
              100.0 * (atEnd - afterWarmUp) / afterWarmUp);
        QVERIFY(passes.count() > rounds);
        QVERIFY(afterWarmUp > 0 && atEnd > 0);
        QVERIFY2(atEnd <= afterWarmUp * (1.0 + kSoakGrowth),
                 qPrintable(QStringLiteral("%1 kB -> %2 kB").arg(afterWarmUp).arg(atEnd)));
    }
};

HEADLIGHT_TEST_MAIN(TestSoak)
#include "test_soak.moc"
