// `headlight sinks` as a user runs it: its --json on the golden GPT-2 has the documented shape
// and agrees with tools/golden/make_sink_goldens.py (the arise layer, the zero-massive KL within
// 1e-4); the table names the four ablations; an empty text, a one-token text, an unknown model
// and --top 0 are refused in one line with a non-zero exit.
#include "cli_runner.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <cmath>

using namespace headlight;
using test::runHeadlight;

namespace {

const QString kSinksModel = QStringLiteral(HEADLIGHT_TEST_DATA "/models/gpt2");

QJsonObject sinksGoldenCase() {
    QFile file(HEADLIGHT_TEST_DATA "/sinks/golden.json");
    if (!file.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(file.fileName()));
    return QJsonDocument::fromJson(file.readAll()).object()["cases"][0].toObject();
}

QString sinksIdsText(const QJsonArray& ids) {
    QStringList parts;
    for (const QJsonValue& id : ids)
        parts << QString::number(id.toInt());
    return parts.join(',');
}
} // namespace

class TestSinksCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void jsonAgreesWithTheGolden() {
        const QJsonObject golden = sinksGoldenCase();
        QCOMPARE(golden["model"].toString(), QStringLiteral("gpt2"));
        const test::CliResult run = runHeadlight({"sinks", "--model", kSinksModel, "--ids",
                                                  sinksIdsText(golden["ids"].toArray()), "--top",
                                                  "4", "--backend", "cpu", "--json"});
        QCOMPARE(run.exitCode, 0);
        const QJsonObject json = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QCOMPARE(json["arise_layer"].toInt(), golden["arise_layer"].toInt());
        const QJsonArray layers = json["layers"].toArray();
        QCOMPARE(layers.size(), 2);
        QCOMPARE(layers[0]["top"].toArray().size(), 4);
        for (const char* field : {"token", "dim", "value", "massive"})
            QVERIFY(layers[0]["top"][0].toObject().contains(field));
        QCOMPARE(json["sink_share"].toArray().size(), 2);
        QCOMPARE(json["sink_share"][0].toArray().size(), 4);
        const QJsonArray ablations = json["ablations"].toArray();
        QStringList ids;
        for (const QJsonValue& a : ablations)
            ids << a["id"].toString();
        QCOMPARE(ids, (QStringList{"zero-massive", "drop-first", "sink-softmax", "sigmoid"}));
        const double kl = ablations[0]["mean_kl"].toDouble(NAN);
        QVERIFY(std::abs(kl - golden["zero_massive"]["mean_kl"].toDouble()) <= 1e-4);
        QCOMPARE(ablations[1]["positions"].toInt(), golden["ids"].toArray().size() - 1);
    }

    void tableNamesEveryAblation() {
        const test::CliResult run =
            runHeadlight({"sinks", "--model", "rope", "--text", "The key is 7. The key is"});
        QCOMPARE(run.exitCode, 0);
        for (const char* line : {"they arise at layer", "zero-massive", "drop-first",
                                 "sink-softmax", "sigmoid", "sink share"})
            QVERIFY2(run.out.contains(line), line);
    }

    void badInputIsRefusedInOneLine_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("reason");
        QTest::newRow("empty text")
            << QStringList{"--model", kSinksModel, "--ids", ""} << QStringLiteral("--ids is empty");
        QTest::newRow("empty --text")
            << QStringList{"--model", "rope", "--text", ""} << QStringLiteral("--text is empty");
        QTest::newRow("one token")
            << QStringList{"--model", kSinksModel, "--ids", "5"} << QStringLiteral("at least 2");
        QTest::newRow("unknown model")
            << QStringList{"--model", "/nonexistent/model", "--ids", "5,6"}
            << QStringLiteral("/nonexistent/model");
        QTest::newRow("top 0") << QStringList{"--model", kSinksModel, "--ids", "5,6", "--top", "0"}
                               << QStringLiteral("--top");
    }

    void badInputIsRefusedInOneLine() {
        QFETCH(QStringList, args);
        QFETCH(QString, reason);
        const test::CliResult run = runHeadlight(QStringList{"sinks"} + args);
        QVERIFY(run.exitCode != 0);
        const QString line = test::refusalReason(run, "sinks");
        QVERIFY2(line.contains(reason), qPrintable(run.err));
        QVERIFY2(!line.trimmed().contains('\n'), qPrintable(run.err));
        QVERIFY(run.out.isEmpty());
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestSinksCli)
#include "test_sinks_cli.moc"
