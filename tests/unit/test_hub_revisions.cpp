// Several revisions of one Hugging Face repository, laid out as huggingface_hub writes them when
// Pythia's branches are fetched by name: refs/<branch> files holding commit hashes, one
// snapshots/<hash>/ per revision linking into shared blobs/, and a revision fetched by its commit
// hash with no ref at all. --revision (core, CLI and a scene's "revision" key) opens each one,
// refuses an unknown one with the revisions the cache holds, and revisions list in training-step
// order. Built from the golden GPT-NeoX checkpoints (parallel and sequential residuals, so that
// which snapshot was opened shows in the loaded model).
#include "cli_runner.h"
#include "error_of.h"
#include "golden.h"
#include "hub_cache_fixture.h"
#include "io/hub_cache.h"
#include "io/scenario.h"
#include "io/tensor_file.h"
#include "model/model_spec.h"
#include "scene_files.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace headlight;

namespace {
const QString kPythiaId = QStringLiteral("test-org/tiny-pythia");

// A commit hash of 40 hex digits made of one repeated digit.
QString commit(char digit) {
    return QString(40, QLatin1Char(digit));
}

QString canonicalOf(const std::string& path) {
    return QFileInfo(QString::fromStdString(path)).canonicalFilePath();
}

QString parallelNeox() {
    return test::goldenRoot() + "/gpt_neox";
}
QString sequentialNeox() {
    return test::goldenRoot() + "/gpt_neox_sequential";
}
} // namespace

class TestHubRevisions : public QObject {
    Q_OBJECT

    test::ScratchDir scratch_;

    // refs: step0 → 1…, step1 → 2…, step2 → 3…, step4 → 4…, step1000 → 5…, step143000 and
    // main → 6…, pr/1 → 2…; snapshot 7… was fetched by its hash and has no ref. Even commits hold
    // the parallel-residual checkpoint, odd ones the sequential one. HF_HUB_CACHE is set to it.
    test::FakeHubCache pythiaCache() {
        test::FakeHubCache cache(scratch_.freshFolder());
        const std::pair<const char*, char> refs[] = {{"step0", '1'},    {"step1", '2'},
                                                     {"step2", '3'},    {"step4", '4'},
                                                     {"step1000", '5'}, {"step143000", '6'}};
        for (char digit = '1'; digit <= '7'; ++digit)
            cache.addModel(kPythiaId, (digit - '0') % 2 ? sequentialNeox() : parallelNeox(),
                           commit(digit), false);
        for (const auto& [name, digit] : refs)
            cache.addRef(kPythiaId, name, commit(digit));
        cache.addRef(kPythiaId, "main", commit('6'));
        cache.addRef(kPythiaId, "pr/1", commit('2'));
        qputenv("HF_HUB_CACHE", cache.root().toUtf8());
        return cache;
    }

    static QString revisionError(const QString& pathOrId, const QString& revision) {
        return test::errorOf<io::CheckpointError>(
            [&] { io::resolveModel(pathOrId.toStdString(), revision.toStdString()); });
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(scratch_.isValid()); }

    void eachRevisionOpensItsSnapshot() {
        const test::FakeHubCache cache = pythiaCache();
        const std::pair<QString, char> cases[] = {
            {"step0", '1'},      {"step1", '2'}, {"step1000", '5'},  {"main", '6'},
            {"step143000", '6'}, {"pr/1", '2'},  {commit('7'), '7'}, {commit('3'), '3'}};
        for (const QString& given :
             {kPythiaId, cache.repoFolder(kPythiaId), cache.snapshot(kPythiaId, commit('4'))}) {
            for (const auto& [revision, digit] : cases) {
                const io::ResolvedModel resolved =
                    io::resolveModel(given.toStdString(), revision.toStdString());
                QCOMPARE(canonicalOf(resolved.folder),
                         QFileInfo(cache.snapshot(kPythiaId, commit(digit))).canonicalFilePath());
                QCOMPARE(QString::fromStdString(resolved.repoId), kPythiaId);
                QCOMPARE(QString::fromStdString(resolved.revision), revision);
            }
        }
        // The snapshot read is the revision's own: step0 is the sequential checkpoint.
        const auto step0 = io::resolveModel(kPythiaId.toStdString(), "step0");
        QVERIFY(!loadModelConfig(step0.folder).parallelResidual);
        QVERIFY(loadModelConfig(io::resolveModel(kPythiaId.toStdString(), "step1").folder)
                    .parallelResidual);
        // No revision: main, as before.
        QCOMPARE(canonicalOf(io::resolveModel(kPythiaId.toStdString(), "").folder),
                 QFileInfo(cache.snapshot(kPythiaId, commit('6'))).canonicalFilePath());
    }

    void revisionsListInTrainingStepOrder() {
        const test::FakeHubCache cache = pythiaCache();
        QStringList names, commits;
        for (const io::CachedRevision& revision :
             io::listRevisions(cache.repoFolder(kPythiaId).toStdString())) {
            names << QString::fromStdString(revision.name);
            commits << QString::fromStdString(revision.commit).left(1);
            QCOMPARE(canonicalOf(revision.snapshot),
                     QFileInfo(cache.snapshot(kPythiaId, QString::fromStdString(revision.commit)))
                         .canonicalFilePath());
        }
        QCOMPARE(names, QStringList({"step0", "step1", "step2", "step4", "step1000", "step143000",
                                     commit('7'), "main", "pr/1"}));
        QCOMPARE(commits, QStringList({"1", "2", "3", "4", "5", "6", "7", "6", "2"}));
        QCOMPARE(io::trainingStepOf("step143000"), std::optional<int64_t>(143000));
        QCOMPARE(io::trainingStepOf("Step_12"), std::optional<int64_t>(12));
        QCOMPARE(io::trainingStepOf("main"), std::nullopt);
        QCOMPARE(io::trainingStepOf("stepwise"), std::nullopt);
    }

    void anUnknownRevisionNamesTheCachedOnes() {
        const test::FakeHubCache cache = pythiaCache();
        const QString listed = "cached revisions: step0, step1, step2, step4, step1000, "
                               "step143000, " +
                               commit('7') + ", main and 1 more";
        QCOMPARE(revisionError(kPythiaId, "step999"),
                 "'step999' is not a revision of " + kPythiaId + " in the cache (" +
                     cache.repoFolder(kPythiaId) + "); " + listed +
                     ". Headlight never downloads: fetch it with `huggingface-cli download " +
                     kPythiaId + " --revision step999`");
        // A name that would leave refs/ or snapshots/ is no revision.
        for (const QString& hostile : {QString("../refs/main"), QString("/etc"), QString("a//b")})
            QVERIFY2(revisionError(kPythiaId, hostile).contains("is not a revision of"),
                     qPrintable(revisionError(kPythiaId, hostile)));
        // A ref whose snapshot was deleted.
        cache.addRef(kPythiaId, "step8", commit('9'));
        QCOMPARE(revisionError(kPythiaId, "step8"),
                 "refs/step8 of " + kPythiaId + " names commit " + commit('9') +
                     ", whose snapshot is not in the cache: fetch it with `huggingface-cli "
                     "download " +
                     kPythiaId + " --revision step8` while online");
        // A plain checkpoint folder has no revisions; an id not cached says what is.
        QCOMPARE(revisionError(parallelNeox(), "step0"),
                 parallelNeox() + " is a checkpoint folder, not a Hugging Face cache entry, so it "
                                  "has no revisions: give a cached ORG/NAME id or a "
                                  "models--ORG--NAME folder");
        QVERIFY(revisionError("nobody/nothing", "step0").contains("cached: " + kPythiaId + "."));
    }

    void theCliTakesRevision() {
        const test::FakeHubCache cache = pythiaCache();
        const test::CliResult step0 = test::runHeadlight(
            {"inspect", "--model", kPythiaId, "--revision", "step0", "--text", "Hello", "--json"});
        QVERIFY2(step0.exitCode == 0, qPrintable(step0.err));
        const QJsonObject json = QJsonDocument::fromJson(step0.out.toUtf8()).object();
        QCOMPARE(canonicalOf(json["model"].toString().toStdString()),
                 QFileInfo(cache.snapshot(kPythiaId, commit('1'))).canonicalFilePath());
        const test::CliResult unknown = test::runHeadlight(
            {"heads", "--model", kPythiaId, "--revision", "step3", "--probes", "1"});
        QVERIFY(unknown.exitCode != 0);
        QCOMPARE(unknown.err.trimmed().count('\n'), 0);
        QVERIFY2(unknown.err.contains("'step3' is not a revision of " + kPythiaId) &&
                     unknown.err.contains("cached revisions: step0, step1, step2"),
                 qPrintable(unknown.err));
    }

    void aSceneNamesItsRevision() {
        const test::FakeHubCache cache = pythiaCache();
        io::Scenario scenario;
        scenario.model = kPythiaId.toStdString();
        scenario.revision = "step2";
        QCOMPARE(
            QFileInfo(app::resolveScenarioModel(scenario, scratch_.path())).canonicalFilePath(),
            QFileInfo(cache.snapshot(kPythiaId, commit('3'))).canonicalFilePath());
        scenario.revision = "step3";
        const QString error = test::errorOf<io::SceneError>(
            [&] { app::resolveScenarioModel(scenario, scratch_.path()); });
        QVERIFY2(error.startsWith("scene: model '" + kPythiaId +
                                  "' at revision 'step3': 'step3' is not a revision of"),
                 qPrintable(error));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestHubRevisions)
#include "test_hub_revisions.moc"
