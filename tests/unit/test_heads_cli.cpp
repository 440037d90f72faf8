// `headlight heads` as a user runs it: on the golden GPT-2, Llama and BERT with the golden probe
// file its --json scores match tools/golden/make_head_role_goldens.py within 1e-5 (NaN fails);
// the JSON has the documented shape; generated probes are the same on every run and named by
// seed and size; probe lists too short or as long as the context are refused in one line naming
// their index, as are models whose context is too small for the probes (a vocabulary too small
// for them: test_head_roles, since no checkpoint here has one).
#include "cli_runner.h"
#include "temp_files.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

using namespace headlight;
using test::runHeadlight;

namespace {

const QString kRoleData = QStringLiteral(HEADLIGHT_TEST_DATA "/head_roles/");
const QString kHeadsModelDir = QStringLiteral(HEADLIGHT_TEST_DATA "/models/");
const QStringList kScoreNames{"previous_token", "duplicate_token", "induction", "positional",
                              "positional_offset", "sink"};

QJsonObject headsJsonOf(const test::CliResult& run) {
    return QJsonDocument::fromJson(run.out.toUtf8()).object();
}

// NaN-safe: false unless both are finite and within 1e-5.
bool headScoreClose(double ours, double expected) {
    return std::isfinite(ours) && std::isfinite(expected) && std::abs(ours - expected) <= 1e-5;
}
} // namespace

class TestHeadsCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    QString probeFile(const QByteArray& json) {
        static int count = 0;
        const QString path = dir_.filePath(QStringLiteral("probe%1.json").arg(++count));
        test::writeFile(path, json);
        return path;
    }

private Q_SLOTS:
    void scoresMatchTheGoldens_data() {
        QTest::addColumn<QString>("model");
        for (const char* model : {"gpt2", "llama", "bert"})
            QTest::newRow(model) << QString(model);
    }

    void scoresMatchTheGoldens() {
        QFETCH(QString, model);
        const QJsonObject golden =
            QJsonDocument::fromJson(test::readFile(kRoleData + "golden.json")).object();
        const QJsonArray expected = golden["models"].toObject()[model].toObject()["heads"].toArray();
        QVERIFY(!expected.isEmpty());
        const auto run = runHeadlight({"heads", "--model", kHeadsModelDir + model, "--backend", "cpu",
                                       "--probe", kRoleData + "probes.json", "--json"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject root = headsJsonOf(run);
        QCOMPARE(root["probe"].toObject()["count"].toInt(), 4);
        const QJsonArray heads = root["heads"].toArray();
        QCOMPARE(heads.size(), expected.size());
        for (qsizetype i = 0; i < heads.size(); ++i) {
            const QJsonObject ours = heads[i].toObject(), want = expected[i].toObject();
            QCOMPARE(ours["layer"].toInt(-1), want["layer"].toInt());
            QCOMPARE(ours["head"].toInt(-1), want["head"].toInt());
            const QJsonObject a = ours["scores"].toObject(), b = want["scores"].toObject();
            for (const QString& name : kScoreNames) {
                const double x = a[name].toDouble(NAN), y = b[name].toDouble(NAN);
                QVERIFY2(name == "positional_offset" ? x == y : headScoreClose(x, y),
                         qPrintable(QStringLiteral("layer %1 head %2 %3: %4 vs %5")
                                        .arg(want["layer"].toInt())
                                        .arg(want["head"].toInt())
                                        .arg(name)
                                        .arg(x, 0, 'g', 10)
                                        .arg(y, 0, 'g', 10)));
            }
        }
    }

    void jsonHasTheDocumentedShape() {
        const auto run = runHeadlight({"heads", "--model", kHeadsModelDir + "gpt2", "--backend", "cpu",
                                       "--probes", "2", "--length", "5", "--seed", "11", "--json"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject root = headsJsonOf(run);
        QCOMPARE(root["probe"].toObject(),
                 (QJsonObject{{"seed", 11}, {"count", 2}, {"length", 5}}));
        const QJsonArray heads = root["heads"].toArray();
        QCOMPARE(heads.size(), 2 * 4); // 2 layers x 4 heads
        for (qsizetype i = 0; i < heads.size(); ++i) {
            const QJsonObject head = heads[i].toObject();
            QCOMPARE(head["layer"].toInt(-1), int(i / 4));
            QCOMPARE(head["head"].toInt(-1), int(i % 4));
            const QJsonObject scores = head["scores"].toObject();
            QCOMPARE(scores.keys().size(), kScoreNames.size());
            for (const QString& name : kScoreNames) {
                QVERIFY2(scores[name].isDouble(), qPrintable(name));
                const double value = scores[name].toDouble();
                QVERIFY2(std::isfinite(value), qPrintable(name));
                if (name == "positional_offset")
                    QVERIFY(value >= 1 && value <= 8 && value == std::floor(value));
                else
                    QVERIFY2(value >= 0.0 && value <= 1.0 + 1e-6, qPrintable(name));
            }
        }
    }

    void generatedProbesAreTheSameEveryRun() {
        const QStringList args{"heads", "--model", kHeadsModelDir + "llama", "--backend", "cpu", "--json"};
        const auto first = runHeadlight(args), second = runHeadlight(args);
        QVERIFY2(first.exitCode == 0, qPrintable(first.err));
        QCOMPARE(second.out, first.out);
        QCOMPARE(headsJsonOf(first)["probe"].toObject(),
                 (QJsonObject{{"seed", 0}, {"count", 8}, {"length", 20}}));
        const auto other = runHeadlight(args + QStringList{"--seed", "1"});
        QVERIFY2(other.exitCode == 0, qPrintable(other.err));
        QVERIFY(other.out != first.out);
    }

    void tableNamesTheProbeSet() {
        const auto run = runHeadlight({"heads", "--model", HEADLIGHT_SOURCE_DIR "/resources/models/rope",
                                       "--backend", "cpu", "--probes", "3", "--seed", "5"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QStringList lines = run.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.value(0), QStringLiteral("probes: 3 generated (seed 5, 20 random tokens repeated twice)"));
        QVERIFY(lines.value(1).startsWith("layer  head  prev-token"));
        QCOMPARE(lines.size(), 2 + 2 * 4); // rope: 2 layers x 4 heads
    }

    void probeListsOutsideTheContextAreRefusedByIndex_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("reason");
        // The golden GPT-2 has 512 positions: 511 tokens is the longest probe.
        QByteArray full = "[[1, 2, 3], [";
        for (int i = 0; i < 512; ++i)
            full += (i ? "," : "") + QByteArray::number(5 + i % 100);
        full += "]]";
        QTest::newRow("one token") << QByteArray("[[1, 2], [3, 4, 5], [7]]")
                                   << "probe 2 has 1 token: a probe needs at least 2";
        QTest::newRow("empty") << QByteArray("[[], [3, 4]]")
                               << "probe 0 has 0 tokens: a probe needs at least 2";
        QTest::newRow("context") << full
                                 << "probe 1 has 512 tokens: a probe must be shorter than the "
                                    "model's context of 512 positions";
        QTest::newRow("vocabulary") << QByteArray("[[1, 2], [3, 668]]")
                                    << "probe 1 holds id 668, outside the model's vocabulary of 668";
        QTest::newRow("not ids") << QByteArray("[[1, 2], [3, -4]]") << "";
        QTest::newRow("not a list") << QByteArray("{\"a\": 1}") << "";
        QTest::newRow("no probes") << QByteArray("[]") << "";
        QTest::newRow("not json") << QByteArray("[[1, 2") << "";
    }

    void probeListsOutsideTheContextAreRefusedByIndex() {
        QFETCH(QByteArray, json);
        QFETCH(QString, reason);
        const QString path = probeFile(json);
        const auto run = runHeadlight({"heads", "--model", kHeadsModelDir + "gpt2", "--backend", "cpu",
                                       "--probe", path});
        QVERIFY(run.exitCode != 0);
        QVERIFY(run.out.isEmpty());
        QVERIFY2(run.err.count('\n') == 1 && run.err.startsWith("headlight heads: "),
                 qPrintable(run.err));
        if (!reason.isEmpty()) QCOMPARE(run.err, "headlight heads: " + reason + "\n");
        else QVERIFY2(run.err.contains(path), qPrintable(run.err));
    }

    void theShortestAndLongestProbesAreScored() {
        QByteArray longest = "[[9, 9], [";
        for (int i = 0; i < 511; ++i)
            longest += (i ? "," : "") + QByteArray::number(5 + i % 100);
        longest += "]]";
        const auto run = runHeadlight({"heads", "--model", kHeadsModelDir + "gpt2", "--backend", "cpu",
                                       "--probe", probeFile(longest), "--json"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QCOMPARE(headsJsonOf(run)["probe"].toObject()["count"].toInt(), 2);
    }

    void modelsTooSmallForTheProbesAreRefused() {
        // The zoo's models have 64 positions and 260 ids.
        const QString rope = HEADLIGHT_SOURCE_DIR "/resources/models/rope";
        auto run = runHeadlight({"heads", "--model", rope, "--length", "32"});
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(run.err, QStringLiteral(
                              "headlight heads: the model's context of 64 positions is too small "
                              "for probes of 64 tokens (--length 32 repeated twice): give --length "
                              "below 32\n"));
        // --length past the widest model here: its own bound, before any model is read.
        run = runHeadlight({"heads", "--model", rope, "--length", "100001"});
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.startsWith("headlight heads: --length must be an integer from 1 to "
                                    "100000"),
                 qPrintable(run.err));
    }

    void generatorOptionsBesideAProbeFileAreRefused() {
        const auto run = runHeadlight({"heads", "--model", kHeadsModelDir + "gpt2", "--probe",
                                       kRoleData + "probes.json", "--seed", "3"});
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(run.err, QStringLiteral("headlight heads: --seed shapes generated probes: leave "
                                         "it out with --probe FILE\n"));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestHeadsCli)
#include "test_heads_cli.moc"
