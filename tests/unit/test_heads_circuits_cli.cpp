// `headlight heads --circuits` and `--pattern FILE` as a user runs them: on the golden GPT-2 the
// JSON's copying and composition scores match tools/golden/make_head_circuit_goldens.py within
// 1e-5 (NaN fails), the strongest pairs are the largest scores, BERT says why it has no copying
// score; a user's pattern equal to the previous-token pattern scores exactly what the detector's
// previous-token score does (itself checked against make_head_role_goldens.py), twice that
// pattern twice as much; patterns that are not square, lie above the diagonal or do not fit the
// probes are refused in one line.
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

const QString kCircuitsModels = QStringLiteral(HEADLIGHT_TEST_DATA "/models/");
const QString kCircuitsGolden = QStringLiteral(HEADLIGHT_TEST_DATA "/head_roles/circuits.json");

bool cliScoreClose(double ours, double expected, double tolerance = 1e-5) {
    return std::isfinite(ours) && std::isfinite(expected) && std::abs(ours - expected) <= tolerance;
}

// The T x T previous-token pattern as JSON rows, each weight `value`.
QByteArray previousTokenRows(int tokens, double value) {
    QJsonArray rows;
    for (int i = 0; i < tokens; ++i) {
        QJsonArray row;
        for (int j = 0; j < tokens; ++j)
            row.append(j == i - 1 ? value : 0.0);
        rows.append(row);
    }
    return QJsonDocument(rows).toJson(QJsonDocument::Compact);
}
} // namespace

class TestHeadsCircuitsCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    QString file(const QString& name, const QByteArray& content) {
        const QString path = dir_.filePath(name);
        test::writeFile(path, content);
        return path;
    }

private Q_SLOTS:
    void circuitsJsonMatchesTheReference() {
        const auto run =
            runHeadlight({"heads", "--model", kCircuitsModels + "gpt2", "--backend", "cpu",
                          "--probes", "2", "--length", "6", "--circuits", "--json"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject root = QJsonDocument::fromJson(run.out.toUtf8()).object();
        const QJsonObject golden =
            QJsonDocument::fromJson(test::readFile(kCircuitsGolden)).object()["gpt2"].toObject();
        const QJsonArray heads = root["heads"].toArray();
        const QJsonArray copying = golden["copying"].toArray();
        QCOMPARE(heads.size(), copying.size());
        for (qsizetype i = 0; i < heads.size(); ++i)
            QVERIFY(cliScoreClose(heads[i].toObject()["scores"].toObject()["copying"].toDouble(NAN),
                                  copying[i].toDouble(NAN)));
        const QJsonObject circuits = root["circuits"].toObject();
        QVERIFY(!circuits.contains("copying_absence"));
        double largestQ = 0.0;
        for (int h1 = 0; h1 < 4; ++h1)
            for (int h2 = 0; h2 < 4; ++h2)
                for (const char* kind : {"q", "k", "v"}) {
                    const auto at = [&](const QJsonObject& object, const char* key) {
                        return object[key]
                            .toArray()[0]
                            .toArray()[h1]
                            .toArray()[1]
                            .toArray()[h2]
                            .toDouble(NAN);
                    };
                    const double ours = at(circuits["composition"].toObject(), kind);
                    QVERIFY(cliScoreClose(ours, at(golden["composition"].toObject(),
                                                   QByteArray(kind).toUpper().constData())));
                    if (QByteArray(kind) == "q") largestQ = std::max(largestQ, ours);
                }
        const QJsonArray strongest = circuits["strongest"].toArray();
        QCOMPARE(strongest.size(), 15); // five per kind
        QCOMPARE(strongest[0].toObject()["kind"].toString(), QStringLiteral("Q"));
        QCOMPARE(strongest[0].toObject()["score"].toDouble(NAN), largestQ);
        QCOMPARE(strongest[0].toObject()["to"].toObject()["layer"].toInt(), 1);
    }

    void aModelWithoutAnLmHeadSaysWhyItHasNoCopyingScore() {
        const auto run =
            runHeadlight({"heads", "--model", kCircuitsModels + "bert", "--backend", "cpu",
                          "--probes", "1", "--length", "4", "--circuits", "--json"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject root = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QVERIFY(root["heads"].toArray()[0].toObject()["scores"].toObject()["copying"].isNull());
        QVERIFY(!root["circuits"].toObject()["copying_absence"].toString().isEmpty());
        const auto table = runHeadlight({"heads", "--model", kCircuitsModels + "bert", "--backend",
                                         "cpu", "--probes", "1", "--length", "4", "--circuits"});
        QVERIFY2(table.out.contains("copying: not scored, the checkpoint has no LM head"),
                 qPrintable(table.out));
        QVERIFY(table.out.contains("Q-composition"));
    }

    void aPreviousTokenPatternScoresAsTheDetector() {
        const QString probes = file("probes.json", "[[5, 9, 13, 9, 5, 7, 21, 8, 30, 11]]");
        for (const double value : {1.0, 2.0}) {
            const QString pattern =
                file(QStringLiteral("pattern%1.json").arg(value), previousTokenRows(10, value));
            const auto run =
                runHeadlight({"heads", "--model", kCircuitsModels + "llama", "--backend", "cpu",
                              "--probe", probes, "--pattern", pattern, "--json"});
            QVERIFY2(run.exitCode == 0, qPrintable(run.err));
            const QJsonObject root = QJsonDocument::fromJson(run.out.toUtf8()).object();
            QCOMPARE(root["pattern"].toString(), pattern);
            const QJsonArray heads = root["heads"].toArray();
            QCOMPARE(heads.size(), 8);
            for (const QJsonValue& head : heads) {
                const QJsonObject scores = head.toObject()["scores"].toObject();
                QVERIFY(cliScoreClose(scores["custom"].toDouble(NAN),
                                      value * scores["previous_token"].toDouble(NAN), 1e-6));
            }
        }
    }

    void patternsThatDoNotFitAreRefused_data() {
        QTest::addColumn<QByteArray>("pattern");
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("reason");
        QTest::newRow("above the diagonal")
            << QByteArray("[[0, 1], [1, 0]]") << QStringList{}
            << "the pattern's row 0, column 1 lies above the diagonal";
        QTest::newRow("not square")
            << QByteArray("[[0, 0], [1]]") << QStringList{} << "row 1 is not a list of 2 numbers";
        QTest::newRow("generated probes")
            << previousTokenRows(10, 1.0) << QStringList{}
            << "probe 0 has 40 tokens but the --pattern is 10 x 10: give --length 5";
        QTest::newRow("probe file")
            << previousTokenRows(4, 1.0)
            << QStringList{"--probe", HEADLIGHT_TEST_DATA "/head_roles/probes.json"}
            << "probe 0 has 14 tokens but the --pattern is 4 x 4: every probe needs 4";
    }

    void patternsThatDoNotFitAreRefused() {
        QFETCH(QByteArray, pattern);
        QFETCH(QStringList, extra);
        QFETCH(QString, reason);
        const QString path =
            file(QStringLiteral("bad%1.json").arg(QTest::currentDataTag()), pattern);
        const auto run = runHeadlight(QStringList{"heads", "--model", kCircuitsModels + "gpt2",
                                                  "--backend", "cpu", "--pattern", path} +
                                      extra);
        QCOMPARE(run.exitCode, 1);
        QVERIFY(run.out.isEmpty());
        QVERIFY2(run.err.count('\n') == 1 && run.err.contains(reason), qPrintable(run.err));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestHeadsCircuitsCli)
#include "test_heads_circuits_cli.moc"
