// Every head's role scores on each backend against tools/golden/make_head_role_goldens.py
// (float64 PyTorch: the attention of models_ref.py's reference passes on the golden GPT-2, Llama
// and BERT over tests/data/head_roles/probes.json, scored from TransformerLens's definitions):
// previous-token, duplicate-token, induction, positional with its offset, and sink within 1e-5.
#include "analysis/head_roles.h"
#include "backend_fixture.h"
#include "golden_json.h"
#include "model/transformer.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <cmath>

using namespace headlight;

namespace {

constexpr double kRoleTolerance = 1e-5;

QJsonDocument readRoleJson(const QString& name) {
    return test::readJsonFile(QStringLiteral(HEADLIGHT_TEST_DATA "/head_roles/") + name);
}

std::vector<std::vector<int32_t>> goldenProbes() {
    std::vector<std::vector<int32_t>> probes;
    for (const QJsonValue& list : readRoleJson("probes.json").array())
        probes.push_back(test::idsOf(list));
    return probes;
}

// NaN-safe: false unless both are finite and within the tolerance.
bool roleClose(double ours, double expected) {
    return std::isfinite(ours) && std::isfinite(expected) &&
           std::abs(ours - expected) <= kRoleTolerance;
}
} // namespace

class TestHeadRoleGoldens : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

public:
    explicit TestHeadRoleGoldens(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void scoresMatchTheReference_data() {
        QTest::addColumn<QString>("model");
        const QJsonObject models = readRoleJson("golden.json").object()["models"].toObject();
        QVERIFY(models.size() >= 3);
        for (const QString& name : models.keys())
            QTest::newRow(qPrintable(name)) << name;
    }

    void scoresMatchTheReference() {
        QFETCH(QString, model);
        const QJsonArray expected = readRoleJson("golden.json")
                                        .object()["models"]
                                        .toObject()[model]
                                        .toObject()["heads"]
                                        .toArray();
        const auto loaded =
            loadModel((QStringLiteral(HEADLIGHT_TEST_DATA "/models/") + model).toStdString(),
                      fixture_.backend());
        const ModelSpec& spec = loaded->spec();
        QCOMPARE(expected.size(), qsizetype(spec.layers) * spec.heads);
        analysis::HeadRoleAccumulator accumulator(spec.layers, spec.heads);
        CaptureRequest capture;
        capture.finalState = false;
        const auto probes = goldenProbes();
        QCOMPARE(probes.size(), std::size_t(4));
        for (const auto& ids : probes)
            accumulator.add(
                ids, loaded->forward(ModelInput{ids, {}, {}}, capture).stackedProbabilities());
        const std::vector<analysis::HeadRoleScores> scores = accumulator.scores();
        for (qsizetype i = 0; i < expected.size(); ++i) {
            const QJsonObject row = expected[i].toObject();
            const QJsonObject want = row["scores"].toObject();
            const analysis::HeadRoleScores& s =
                scores[std::size_t(row["layer"].toInt() * spec.heads + row["head"].toInt())];
            const QString where = QStringLiteral("layer %1 head %2")
                                      .arg(row["layer"].toInt())
                                      .arg(row["head"].toInt());
            const std::pair<const char*, double> pairs[] = {{"previous_token", s.previousToken},
                                                            {"duplicate_token", s.duplicateToken},
                                                            {"induction", s.induction},
                                                            {"positional", s.positional},
                                                            {"sink", s.sink}};
            for (const auto& [name, ours] : pairs)
                QVERIFY2(roleClose(ours, want[name].toDouble(NAN)),
                         qPrintable(where + " " + name + ": " + QString::number(ours, 'g', 10) +
                                    " vs " + QString::number(want[name].toDouble(NAN), 'g', 10)));
            QCOMPARE(s.positionalOffset, want["positional_offset"].toInt());
        }
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestHeadRoleGoldens)
#include "test_head_role_goldens.moc"
