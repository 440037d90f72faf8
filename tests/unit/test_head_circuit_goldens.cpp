// Copying and Q-, K-, V-composition scores (core/analysis/head_circuits.h) on golden checkpoints
// of seven families against tools/golden/make_head_circuit_goldens.py, which reads the weights by
// their Hugging Face names, processes them as TransformerLens's from_pretrained does and computes
// every score densely in float64 (the full [V, V] OV circuit's eigenvalues; [D, D] products),
// where the engine takes the dh × dh and triangular-factor routes. Within 1e-5, NaN-safe. Also:
// pairs with the later head not in a later layer score exactly 0, and a model with no linear
// unembedding says why it has no copying score.
#include "analysis/head_circuits.h"
#include "io/checkpoint.h"
#include "model/checkpoint_layout.h"
#include "model/model_spec.h"
#include "temp_files.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <cmath>

using namespace headlight;
using namespace headlight::analysis;

namespace {

const QString kCircuitGolden = QStringLiteral(HEADLIGHT_TEST_DATA "/head_roles/circuits.json");
const std::string kCircuitModels = HEADLIGHT_TEST_DATA "/models/";

HeadCircuits circuitsOf(const QString& model) {
    const std::string folder = kCircuitModels + model.toStdString();
    const ModelSpec spec = loadModelConfig(folder);
    return readHeadCircuits(readWeights(io::Checkpoint(folder), spec), spec);
}

// NaN-safe: false unless both are finite and within 1e-5.
bool circuitScoreClose(double ours, double expected) {
    return std::isfinite(ours) && std::isfinite(expected) && std::abs(ours - expected) <= 1e-5;
}

QString headLabel(std::size_t index, int heads) {
    return QStringLiteral("L%1H%2").arg(int(index) / heads).arg(int(index) % heads);
}
} // namespace

class TestHeadCircuitGoldens : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void scoresMatchTheReference_data() {
        QTest::addColumn<QString>("model");
        for (const char* model :
             {"gpt2", "llama", "gpt_neox", "gemma2", "qwen2", "bert", "opt_post_ln"})
            QTest::newRow(model) << QString(model);
    }

    void scoresMatchTheReference() {
        QFETCH(QString, model);
        const QJsonObject golden =
            QJsonDocument::fromJson(test::readFile(kCircuitGolden)).object()[model].toObject();
        QVERIFY(!golden.isEmpty());
        const HeadCircuits circuits = circuitsOf(model);
        const int heads = circuits.heads;
        const auto total = std::size_t(circuits.layers) * std::size_t(heads);

        const std::vector<double> copying = copyingScores(circuits);
        if (golden["copying"].isNull()) {
            QVERIFY(copying.empty());
            QVERIFY(!circuits.copyingAbsence.empty());
        } else {
            const QJsonArray expected = golden["copying"].toArray();
            QCOMPARE(copying.size(), std::size_t(expected.size()));
            for (std::size_t i = 0; i < copying.size(); ++i)
                QVERIFY2(circuitScoreClose(copying[i], expected[qsizetype(i)].toDouble(NAN)),
                         qPrintable(QStringLiteral("copying of %1: %2 vs %3")
                                        .arg(headLabel(i, heads))
                                        .arg(copying[i], 0, 'g', 10)
                                        .arg(expected[qsizetype(i)].toDouble(NAN), 0, 'g', 10)));
        }

        const std::vector<std::pair<const char*, CompositionKind>> kinds{
            {"Q", CompositionKind::Query},
            {"K", CompositionKind::Key},
            {"V", CompositionKind::Value}};
        for (const auto& [name, kind] : kinds) {
            const std::vector<double> scores = compositionScores(circuits, kind);
            QCOMPARE(scores.size(), total * total);
            const QJsonArray expected = golden["composition"].toObject()[name].toArray();
            int nonZero = 0;
            for (std::size_t a = 0; a < total; ++a)
                for (std::size_t b = 0; b < total; ++b) {
                    const double want = expected[qsizetype(a) / heads]
                                            .toArray()[qsizetype(a) % heads]
                                            .toArray()[qsizetype(b) / heads]
                                            .toArray()[qsizetype(b) % heads]
                                            .toDouble(NAN);
                    const double ours = scores[a * total + b];
                    const bool later = int(b) / heads > int(a) / heads;
                    QVERIFY2(later ? circuitScoreClose(ours, want) : ours == 0.0 && want == 0.0,
                             qPrintable(QStringLiteral("%1-composition %2 -> %3: %4 vs %5")
                                            .arg(name, headLabel(a, heads), headLabel(b, heads))
                                            .arg(ours, 0, 'g', 10)
                                            .arg(want, 0, 'g', 10)));
                    nonZero += later && ours > 0.0;
                }
            QVERIFY(nonZero > 0);
        }
    }

    void progressCountsEveryLayerPair() {
        const HeadCircuits circuits = circuitsOf("gemma2");
        QCOMPARE(circuits.layers, 4);
        std::vector<std::pair<int, int>> calls;
        compositionScores(circuits, CompositionKind::Value,
                          [&](int done, int total) { calls.emplace_back(done, total); });
        QCOMPARE(calls.size(), std::size_t(6));
        QCOMPARE(calls.back(), std::make_pair(6, 6));
    }

    void aMaskedLmHeadHasNoCopyingScore() {
        const HeadCircuits circuits = circuitsOf("bert_mlm");
        QVERIFY(copyingScores(circuits).empty());
        QVERIFY2(QString::fromStdString(circuits.copyingAbsence).contains("not a linear"),
                 circuits.copyingAbsence.c_str());
    }
};

HEADLIGHT_TEST_APPLESS_MAIN(TestHeadCircuitGoldens)
#include "test_head_circuit_goldens.moc"
