// The Hugging Face hub cache, offline: --model takes a snapshot folder, a models--ORG--NAME folder
// (refs/main's snapshot, else the newest) or an ORG/NAME id looked up where huggingface_hub keeps
// its cache; a missing id says where Headlight looked and what the cache holds; links out of the
// cache, dangling links and unfinished downloads are refused with one line. Built on fake caches
// with real relative symlinks into blobs/, holding copies of the golden checkpoints.
#include "backend/backend.h"
#include "cli_runner.h"
#include "error_of.h"
#include "golden.h"
#include "hub_cache_fixture.h"
#include "io/hub_cache.h"
#include "model/cached_model_survey.h"
#include "model/transformer.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <filesystem>

using namespace headlight;

namespace {
const QString kBertId = QStringLiteral("test-org/tiny-bert");

QString canonical(const std::string& path) {
    return QFileInfo(QString::fromStdString(path)).canonicalFilePath();
}

QString resolveError(const QString& pathOrId) {
    return test::errorOf<io::CheckpointError>([&] { io::resolveModel(pathOrId.toStdString()); });
}

// Sets an environment variable for one scope and puts the old value back.
class ScopedEnvironment {
public:
    ScopedEnvironment(const char* name, const QByteArray& value)
        : name_(name)
        , had_(qEnvironmentVariableIsSet(name))
        , old_(qgetenv(name)) {
        if (value.isNull())
            qunsetenv(name);
        else
            qputenv(name, value);
    }
    ~ScopedEnvironment() {
        if (had_)
            qputenv(name_, old_);
        else
            qunsetenv(name_);
    }

private:
    const char* name_;
    bool had_;
    QByteArray old_;
};
} // namespace

class TestHubCache : public QObject {
    Q_OBJECT

    test::ScratchDir scratch_;

    // A fresh cache holding the golden BERT as test-org/tiny-bert, with HF_HUB_CACHE set to it.
    test::FakeHubCache freshCache() {
        test::FakeHubCache cache(scratch_.freshFolder());
        cache.addModel(kBertId, test::goldenRoot() + "/bert");
        qputenv("HF_HUB_CACHE", cache.root().toUtf8());
        return cache;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(scratch_.isValid()); }

    void resolvesSnapshotRepoFolderAndId() {
        const test::FakeHubCache cache = freshCache();
        const QString snapshot = cache.snapshot(kBertId);
        for (const QString& given :
             {snapshot, snapshot + "/", cache.repoFolder(kBertId), kBertId}) {
            const io::ResolvedModel resolved = io::resolveModel(given.toStdString());
            QCOMPARE(canonical(resolved.folder), QFileInfo(snapshot).canonicalFilePath());
            QCOMPARE(QString::fromStdString(resolved.repoId), kBertId);
        }
        const io::ResolvedModel plain =
            io::resolveModel((test::goldenRoot() + "/bert").toStdString());
        QCOMPARE(QString::fromStdString(plain.folder), test::goldenRoot() + "/bert");
        QVERIFY(plain.repoId.empty());
    }

    // The weights are read through the symlinks: the forward pass is the golden one.
    void cachedModelRunsTheGoldenForward() {
        freshCache();
        const std::string folder = io::resolveModel(kBertId.toStdString()).folder;
        auto backend = makeCpuBackend();
        const auto model = loadModel(folder, *backend);
        const io::SafetensorsFile expected(
            (test::goldenRoot() + "/bert/golden/punctuation.safetensors").toStdString());
        ModelInput input;
        for (int64_t id : expected.loadI64("input_ids"))
            input.ids.push_back(int32_t(id));
        for (int64_t t : expected.loadI64("token_type_ids"))
            input.tokenTypes.push_back(int32_t(t));
        input.attentionMask.assign(input.ids.size(), true);
        const Trace trace = model->forward(input, {});
        QVERIFY(test::maxAbsDiff(trace.lastHiddenState, expected.loadF32("last_hidden_state")) <=
                test::kGoldenTolerance);
    }

    void repoFolderOpensRefsMainElseTheNewestSnapshot() {
        const test::FakeHubCache cache = freshCache();
        const QString older = cache.snapshot(kBertId);
        const QString newer =
            cache.addModel(kBertId, test::goldenRoot() + "/bert_mlm", "feedface", false);
        namespace fs = std::filesystem;
        fs::last_write_time(older.toStdString(),
                            fs::last_write_time(newer.toStdString()) - std::chrono::hours(1));
        const std::string repo = cache.repoFolder(kBertId).toStdString();
        QCOMPARE(canonical(io::snapshotOf(repo)), QFileInfo(older).canonicalFilePath());
        test::writeFile(cache.repoFolder(kBertId) + "/refs/main", "0123456789abcdef\n");
        QCOMPARE(canonical(io::snapshotOf(repo)), QFileInfo(newer).canonicalFilePath());
        QVERIFY(QFile::remove(cache.repoFolder(kBertId) + "/refs/main"));
        QCOMPARE(canonical(io::snapshotOf(repo)), QFileInfo(newer).canonicalFilePath());
        test::writeFile(cache.repoFolder(kBertId) + "/refs/main", "../../../etc");
        QCOMPARE(canonical(io::snapshotOf(repo)), QFileInfo(newer).canonicalFilePath());
    }

    void cacheRootFollowsHuggingFaceHub() {
        const ScopedEnvironment hub("HF_HUB_CACHE", QByteArray());
        const ScopedEnvironment legacy("HUGGINGFACE_HUB_CACHE", QByteArray());
        const ScopedEnvironment home("HF_HOME", QByteArray());
        const ScopedEnvironment xdg("XDG_CACHE_HOME", QByteArray());
        const ScopedEnvironment user("HOME", "/home/someone");
        QCOMPARE(io::hubCacheRoot().path, std::string("/home/someone/.cache/huggingface/hub"));
        qputenv("XDG_CACHE_HOME", "/xdg");
        QCOMPARE(io::hubCacheRoot().path, std::string("/xdg/huggingface/hub"));
        qputenv("HF_HOME", "~/hf");
        QCOMPARE(io::hubCacheRoot().path, std::string("/home/someone/hf/hub"));
        QCOMPARE(io::hubCacheRoot().source, std::string("HF_HOME"));
        qputenv("HUGGINGFACE_HUB_CACHE", "/old");
        QCOMPARE(io::hubCacheRoot().path, std::string("/old"));
        qputenv("HF_HUB_CACHE", "/new");
        QCOMPARE(io::hubCacheRoot().path, std::string("/new"));
        QCOMPARE(io::hubCacheRoot().source, std::string("HF_HUB_CACHE"));
    }

    void aMissingIdSaysWhereItLookedAndWhatIsCached() {
        const test::FakeHubCache cache = freshCache();
        QCOMPARE(resolveError("nobody/nothing"),
                 "'nobody/nothing' is neither a folder nor a model in the Hugging Face cache "
                 "(looked for " +
                     cache.root() +
                     "/models--nobody--nothing, the cache from HF_HUB_CACHE); cached: "
                     "test-org/tiny-bert. Headlight never downloads: fetch it with "
                     "`huggingface-cli download nobody/nothing`");
        qputenv("HF_HUB_CACHE", scratch_.freshFolder().toUtf8());
        QVERIFY(resolveError("nobody/nothing").contains("; the cache holds no models."));
        // Not an id: left to the checkpoint reader, which says the folder does not exist.
        QCOMPARE(QString::fromStdString(io::resolveModel("no/such/folder").folder),
                 QString("no/such/folder"));
    }

    void refusesLinksLeavingTheCache() {
        const test::FakeHubCache cache = freshCache();
        const QString config = cache.snapshot(kBertId) + "/config.json";
        const QString outside = test::goldenRoot() + "/bert/config.json";
        QVERIFY(QFile::remove(config));
        test::FakeHubCache::link(outside, config);
        QCOMPARE(resolveError(kBertId),
                 config + " links to " + outside + ", outside the cache's blobs folder " +
                     QFileInfo(cache.repoFolder(kBertId) + "/blobs").canonicalFilePath() +
                     "; Headlight reads only files inside the cache");
        QVERIFY(QFile::remove(config));
        test::FakeHubCache::link("../../../models--other/blobs/x", config);
        QVERIFY(resolveError(cache.snapshot(kBertId)).contains("outside the cache's blobs folder"));
    }

    void refusesDanglingLinksAndUnfinishedDownloads() {
        const test::FakeHubCache cache = freshCache();
        const QString weights = cache.snapshot(kBertId) + "/model.safetensors";
        const QString blob = cache.blobOf(kBertId, "model.safetensors");
        const QString target = "../../blobs/" + QFileInfo(blob).fileName();
        QVERIFY(QFile::rename(blob, blob + ".incomplete"));
        QCOMPARE(resolveError(kBertId),
                 weights + " links to " + target + ", which is only partly downloaded (" +
                     QFileInfo(blob).fileName() + ".incomplete, " +
                     QString::number(QFileInfo(blob + ".incomplete").size()) +
                     " bytes): finish it with `huggingface-cli download test-org/tiny-bert` "
                     "while online");
        QVERIFY(QFile::remove(blob + ".incomplete"));
        QCOMPARE(resolveError(kBertId), weights + " links to " + target +
                                            ", which does not exist (a dangling link: the blob "
                                            "was deleted)");
        // A download in progress: huggingface_hub links a file only once its blob is complete.
        QVERIFY(QFile::remove(weights));
        test::writeFile(cache.repoFolder(kBertId) + "/blobs/0a1b2c.incomplete", "12345");
        QCOMPARE(resolveError(kBertId),
                 cache.snapshot(kBertId) +
                     ": model.safetensors not downloaded yet; 1 download(s) unfinished in blobs/ "
                     "(0a1b2c.incomplete, 5 bytes): finish with `huggingface-cli download "
                     "test-org/tiny-bert` while online");
    }

    void listsAndSurveysCachedModels() {
        const test::FakeHubCache cache = freshCache();
        cache.addModel("test-org/tiny-gpt2-sharded", test::goldenRoot() + "/gpt2_plain");
        cache.addModel("google/t5-tiny", test::goldenRoot() + "/bert");
        test::writeFile(cache.snapshot("google/t5-tiny") + "/config.json.tmp",
                        R"({"model_type": "t5", "architectures": ["T5Model"]})");
        QVERIFY(QFile::remove(cache.snapshot("google/t5-tiny") + "/config.json"));
        QVERIFY(QFile::rename(cache.snapshot("google/t5-tiny") + "/config.json.tmp",
                              cache.snapshot("google/t5-tiny") + "/config.json"));
        QDir().mkpath(cache.repoFolder("empty/never-downloaded") + "/snapshots");
        const QString downloading =
            cache.addModel("test-org/downloading", test::goldenRoot() + "/bert");
        QVERIFY(QFile::remove(downloading + "/model.safetensors"));
        test::writeFile(cache.repoFolder("test-org/downloading") + "/blobs/9e1f.incomplete", "1");

        const std::vector<io::CachedModel> models =
            io::listCachedModels(cache.root().toStdString());
        QStringList ids;
        for (const io::CachedModel& model : models)
            ids << QString::fromStdString(model.repoId);
        QCOMPARE(ids,
                 QStringList({"empty/never-downloaded", "google/t5-tiny", "test-org/downloading",
                              "test-org/tiny-bert", "test-org/tiny-gpt2-sharded"}));
        qint64 bertBytes = 0;
        for (const QFileInfo& file : QDir(test::goldenRoot() + "/bert").entryInfoList(QDir::Files))
            bertBytes += file.size();
        QCOMPARE(qint64(models[3].bytesOnDisk), bertBytes);

        const CachedModelSurvey never = surveyCachedModel(models[0]);
        QVERIFY(!never.runnable);
        QCOMPARE(never.problem, std::string("no snapshot: the model was never fully downloaded"));
        const CachedModelSurvey t5 = surveyCachedModel(models[1]);
        QCOMPARE(t5.architecture, std::string("t5 · T5Model"));
        QVERIFY(!t5.runnable);
        QVERIFY2(t5.problem.find("t5") != std::string::npos, t5.problem.c_str());
        const CachedModelSurvey partial = surveyCachedModel(models[2]);
        QCOMPARE(partial.architecture, std::string("bert · BertModel"));
        QVERIFY(!partial.runnable);
        QVERIFY2(partial.problem.find(": model.safetensors not downloaded yet") !=
                     std::string::npos,
                 partial.problem.c_str());
        const CachedModelSurvey bert = surveyCachedModel(models[3]);
        QCOMPARE(bert.architecture, std::string("bert · BertModel"));
        QCOMPARE(bert.dtypes, std::string("F32"));
        QVERIFY2(bert.runnable, bert.problem.c_str());
        const CachedModelSurvey gpt2 = surveyCachedModel(models[4]);
        QCOMPARE(gpt2.architecture, std::string("gpt2 · GPT2Model"));
        QCOMPARE(gpt2.dtypes, std::string("BF16"));
        QVERIFY2(gpt2.runnable, gpt2.problem.c_str());
    }

    void cliInspectAndTokenizeTakeACachedId() {
        freshCache();
        const test::CliResult inspect =
            test::runHeadlight({"inspect", "--model", kBertId, "--text", "Hello, world!",
                                "--backend", "cpu", "--json"});
        QVERIFY2(inspect.exitCode == 0, qPrintable(inspect.err));
        const QJsonObject json = QJsonDocument::fromJson(inspect.out.toUtf8()).object();
        QCOMPARE(json["architecture"].toString(), QString("bert"));
        QCOMPARE(canonical(json["model"].toString().toStdString()),
                 QFileInfo(QString::fromUtf8(qgetenv("HF_HUB_CACHE")) +
                           "/models--test-org--tiny-bert/snapshots/" + test::kRevision)
                     .canonicalFilePath());
        const test::CliResult tokenize =
            test::runHeadlight({"tokenize", "--model", kBertId, "--text", "Hello", "--json"});
        QVERIFY2(tokenize.exitCode == 0, qPrintable(tokenize.err));
        const test::CliResult missing =
            test::runHeadlight({"inspect", "--model", "nobody/nothing", "--text", "x", "--json"});
        QVERIFY(missing.exitCode != 0);
        QVERIFY2(missing.err.contains("cached: test-org/tiny-bert."), qPrintable(missing.err));
        QCOMPARE(missing.err.trimmed().count('\n'), 0);
    }
};

QTEST_GUILESS_MAIN(TestHubCache)
#include "test_hub_cache.moc"
