// The X-former variants of the composed softmax path on each backend against the float64
// PyTorch reference of tools/golden/variant_reference.py (tests/data/variants): every sparse-mask
// preset and hand-made parts (seeded random included), the priors, adaptive span, talking heads,
// positions none / sinusoidal / ALiBi (6 heads too) and dropped FFNs, on BERT, GPT-2 and Llama.
// Attentions, the last hidden state and the internals the engine reports, within 1e-4; on Vulkan
// with no validation error. Also the ALiBi slope rule and the SplitMix64 draws that the Python
// port reproduces.
#include "backend_fixture.h"
#include "variant_golden.h"
#include "variants/position_bias.h"
#include "variants/seeded_random.h"

#include <QTest>

using namespace headlight;

namespace {
uint64_t hex(const QJsonValue& v) {
    return v.toString().toULongLong(nullptr, 16);
}
} // namespace

class TestVariantGoldens : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

public:
    explicit TestVariantGoldens(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void forwardMatchesPyTorch_data() {
        QTest::addColumn<int>("index");
        const auto cases = test::variantGoldenCases();
        QVERIFY2(cases.size() >= 25, "expected the cases of tools/golden/make_variant_goldens.py");
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(qPrintable(cases[i].name())) << int(i);
    }

    void forwardMatchesPyTorch() {
        QFETCH(int, index);
        test::verifyVariantCase(fixture_.backend(), test::variantGoldenCases()[std::size_t(index)]);
    }

    // Press et al.'s get_slopes, for power-of-two head counts and others.
    void alibiSlopesFollowThePaper() {
        const QJsonObject slopes = test::variantGoldenDocument()["alibi_slopes"].toObject();
        QVERIFY(!slopes.isEmpty());
        for (const QString& key : slopes.keys()) {
            const QJsonArray expected = slopes[key].toArray();
            const std::vector<float> ours = variants::alibiSlopes(key.toInt());
            QCOMPARE(qsizetype(ours.size()), expected.size());
            for (qsizetype k = 0; k < expected.size(); ++k)
                QVERIFY2(std::abs(ours[std::size_t(k)] / expected[k].toDouble() - 1.0) < 1e-6,
                         qPrintable(QString("%1 heads, slope %2: %3 vs %4")
                                        .arg(key)
                                        .arg(k)
                                        .arg(ours[std::size_t(k)])
                                        .arg(expected[k].toDouble())));
        }
    }

    // The Python port of SeededRandom draws the engine's numbers.
    void seededRandomMatchesThePythonPort() {
        const QJsonObject vectors = test::variantGoldenDocument()["seeded_random"].toObject();
        QVERIFY(!vectors.isEmpty());
        for (const QJsonValue& v : vectors["random"].toArray()) {
            const QJsonObject o = v.toObject();
            variants::SeededRandom random(hex(o["seed"]));
            for (const QJsonValue& n : o["next"].toArray())
                QCOMPARE(random.next(), hex(n));
            for (const QJsonValue& n : o["below_10"].toArray())
                QCOMPARE(random.below(10), uint64_t(n.toInt()));
        }
        for (const QJsonValue& v : vectors["streams"].toArray()) {
            const QJsonObject o = v.toObject();
            QCOMPARE(variants::streamSeed(uint64_t(o["seed"].toInt()),
                                          uint32_t(o["purpose"].toInt()),
                                          uint32_t(o["layer"].toInt())),
                     hex(o["value"]));
        }
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestVariantGoldens)
#include "test_variant_goldens.moc"
