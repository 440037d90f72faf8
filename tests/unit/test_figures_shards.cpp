// `headlight figures realformer --shard i/n` and `headlight merge` as a cluster runs them: three
// shards merged in any order give the medians.csv table bytes (all but the "#" provenance lines,
// which name each run's own command) and PNG pixels of one run over the whole corpus; `headlight
// reproduce` reproduces a figure and the table of a run and refuses a merged one; every shard set
// that is not one whole run (other models, other settings, a shard missing or given twice, a
// truncated or foreign file) gets one line and a non-zero exit.
#include "cli_runner.h"
#include "export/embedded_metadata.h"
#include "temp_files.h"
#include "zoo_models.h"

#include <QDir>
#include <QImage>
#include <QTest>

using namespace headlight;
using test::runHeadlight;

namespace {

const QStringList kShardTexts = {
    "The hacker found the bug in the kernel.", "A kludge is a clever but ugly fix.",
    "RTFM: read the manual first, then ask.", "Foo and bar stand for anything at all.",
    "The daemon wakes up when mail arrives."};

QString writeShardCorpus(const QString& path, const QStringList& texts) {
    test::writeFile(path, (texts.join("\n") + "\n").toUtf8());
    return path;
}

// Runs shard `index` of `count`; returns the file it wrote.
QString runShard(const QString& corpus, int index, int count, const QString& out,
                 const QString& models = test::zooModelsRoot()) {
    const test::CliResult run =
        runHeadlight({"figures", "realformer", "--corpus", corpus, "--shard",
                      QStringLiteral("%1/%2").arg(index).arg(count), "--out", out, "--models",
                      models, "--backend", "cpu"});
    if (run.exitCode != 0) qFatal("shard run failed: %s", qPrintable(run.err));
    return QStringLiteral("%1/realformer-shard-%2-of-%3.safetensors")
        .arg(out)
        .arg(index, 4, 10, QLatin1Char('0'))
        .arg(count, 4, 10, QLatin1Char('0'));
}

// The zoo's three models copied into `folder`, with post_ln's config.json one byte longer.
QString changedZoo(const QString& folder) {
    for (const QString model : {"post_ln", "pre_ln", "realformer"}) {
        const QDir from(test::zooModelsRoot() + "/" + model);
        QDir().mkpath(folder + "/" + model);
        for (const QString& file : from.entryList(QDir::Files))
            QFile::copy(from.filePath(file), folder + "/" + model + "/" + file);
    }
    const QString config = folder + "/post_ln/config.json";
    test::writeFile(config, test::readFile(config) + "\n");
    return folder;
}

void expectRefusal(const QStringList& args, const QString& message) {
    const test::CliResult run = runHeadlight(args);
    QCOMPARE(run.exitCode, 1);
    const QString reason = test::refusalReason(run, "merge");
    QVERIFY2(reason.startsWith("headlight merge: ") && !reason.contains('\n'), qPrintable(run.err));
    QVERIFY2(reason.contains(message), qPrintable(run.err + " ≠ " + message));
}
} // namespace

class TestFiguresShards : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        qunsetenv("DISPLAY");
        qunsetenv("QT_QPA_PLATFORM");
        corpus_ = writeShardCorpus(dir_.filePath("corpus.txt"), kShardTexts);
        for (int i = 0; i < 3; ++i)
            shards_ << runShard(corpus_, i, 3, dir_.filePath("shards"));
    }

    void mergedShardsEqualOneRun() {
        const QString one = dir_.filePath("one"), merged = dir_.filePath("merged");
        const test::CliResult single =
            runHeadlight({"figures", "realformer", "--corpus", corpus_, "--out", one, "--models",
                          test::zooModelsRoot(), "--format", "png", "--backend", "cpu"});
        QVERIFY2(single.exitCode == 0, qPrintable(single.err));
        // Given out of order: the merge does not depend on it.
        const test::CliResult merge = runHeadlight(
            {"merge", shards_[2], shards_[0], shards_[1], "--out", merged, "--format", "png"});
        QVERIFY2(merge.exitCode == 0, qPrintable(merge.err));
        QCOMPARE(merge.out, QString(single.out).replace(one, merged));
        const QByteArray csv = render::csvWithoutComments(test::readFile(one + "/medians.csv"));
        QCOMPARE(render::csvWithoutComments(test::readFile(merged + "/medians.csv")), csv);
        QVERIFY(csv.startsWith("model,measure,layer,head,q1,median,q3,values,texts\n"));
        QVERIFY(csv.contains("realformer,entropy,3,3,"));
        for (const QString model : {"post_ln", "pre_ln", "realformer"})
            for (const QString measure : {"entropy", "jsd"}) {
                const QString file = "/" + model + "-" + measure + ".png";
                const QImage expected(one + file), got(merged + file);
                QVERIFY(!expected.isNull());
                QVERIFY2(got == expected, qPrintable(file));
            }
        for (const QString file : {"/pre_ln-jsd.png", "/medians.csv"}) {
            const test::CliResult again = runHeadlight({"reproduce", one + file});
            QVERIFY2(again.exitCode == 0, qPrintable(again.err));
            QVERIFY2(again.out.endsWith("identical: " + one + file + "\n"), qPrintable(again.out));
        }
        const test::CliResult refused = runHeadlight({"reproduce", merged + "/post_ln-jsd.png"});
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(test::refusalReason(refused, "reproduce")
                     .contains("merged from corpus shards (`headlight merge`)"),
                 qPrintable(refused.err));
    }

    void shardsOfAnotherRunAreRefused() {
        const QString other = writeShardCorpus(dir_.filePath("other.txt"), kShardTexts.mid(1));
        const QString otherShard = runShard(other, 1, 3, dir_.filePath("other"));
        expectRefusal({"merge", shards_[0], otherShard, shards_[2], "--out", dir_.filePath("x")},
                      "are not shards of one run: their corpus_name differs");
        const QString changed =
            runShard(corpus_, 1, 3, dir_.filePath("changed"), changedZoo(dir_.filePath("zoo")));
        expectRefusal({"merge", shards_[0], changed, shards_[2], "--out", dir_.filePath("x")},
                      "the files of model post_ln differ");
        const QString ofTwo = runShard(corpus_, 1, 2, dir_.filePath("two"));
        expectRefusal({"merge", shards_[0], ofTwo, "--out", dir_.filePath("x")},
                      "one of 3 shards and one of 2");
        QVERIFY(!QFileInfo::exists(dir_.filePath("x")));
    }

    void missingDuplicateTruncatedAndForeignFilesAreRefused() {
        const QString out = dir_.filePath("never");
        expectRefusal({"merge", shards_[0], shards_[2], "--out", out}, "missing shard 1/3");
        expectRefusal({"merge", shards_[0], shards_[1], shards_[1], shards_[2], "--out", out},
                      "shard 1/3 is given twice");
        const QString truncated = dir_.filePath("truncated.safetensors");
        const QByteArray whole = test::readFile(shards_[1]);
        test::writeFile(truncated, whole.left(whole.size() / 2));
        expectRefusal({"merge", shards_[0], truncated, shards_[2], "--out", out}, truncated);
        const QString weights = test::zooModelsRoot() + "/post_ln/model.safetensors";
        expectRefusal({"merge", weights, "--out", out}, "not a Headlight corpus shard");
        expectRefusal({"merge", "--out", out}, "give the shard files");
        QVERIFY(!QFileInfo::exists(out));
    }

    void badShardArgumentsAreRefused() {
        for (const QString shard : {"3/3", "1/0", "a/b", "-1/2"}) {
            const test::CliResult run =
                runHeadlight({"figures", "realformer", "--corpus", corpus_, "--shard", shard,
                              "--out", dir_.filePath("never"), "--models", test::zooModelsRoot()});
            QCOMPARE(run.exitCode, 1);
            QVERIFY2(test::refusalReason(run, "figures").contains("--shard"), qPrintable(run.err));
        }
    }

private:
    test::ScratchDir dir_;
    QString corpus_;
    QStringList shards_;
};

HEADLIGHT_TEST_GUILESS_MAIN(TestFiguresShards)
#include "test_figures_shards.moc"
