// The query-key embedding of every head on each backend against tools/golden/
// make_query_key_goldens.py (float64 PyTorch: queries and keys rebuilt from the Hugging Face
// layers, GPT-2's c_attn and Llama's q_proj / k_proj with rotary embeddings and grouped-query
// heads, then the AttentionViz scaling and translation and torch.linalg.eigh): the 2-D
// coordinates of every query and key, NaN for padding, the variance shares, the scale c and the
// distance-logit correlation. Coordinates within 1e-4 of the reference's scale (their largest
// magnitude), the rest within 1e-4.
#include "analysis/query_key_embedding.h"
#include "backend_fixture.h"
#include "golden.h"

#include <QTest>
#include <cmath>

using namespace headlight;

namespace {
// Largest difference between `ours` [T, 2] and the reference's head `head` of [H, T, 2], with NaN
// required in the same places (test::maxAbsDiffSameNan); +inf when a NaN is out of place or
// `ours` does not hold the reference's T · 2 coordinates (the count comes from the reference, so
// that no coordinates at all cannot pass).
double qkCoordinateError(const std::vector<float>& ours, const Tensor& expected, int head) {
    const auto n = std::size_t(expected.dim(1) * expected.dim(2));
    return test::maxAbsDiffSameNan(ours, expected.values().subspan(std::size_t(head) * n, n));
}

double qkLargestMagnitude(const Tensor& t) {
    double largest = 0.0;
    for (const float v : t.values())
        if (!std::isnan(v)) largest = std::max(largest, double(std::abs(v)));
    return largest;
}
} // namespace

class TestQueryKeyGoldens : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

public:
    explicit TestQueryKeyGoldens(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void embeddingMatchesPyTorch_data() {
        QTest::addColumn<int>("index");
        const auto cases = test::goldenSetCases("query_key");
        QVERIFY2(cases.size() >= 3, "expected the cases of tools/golden/make_query_key_goldens.py");
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(qPrintable(cases[i].name())) << int(i);
    }

    void embeddingMatchesPyTorch() {
        QFETCH(int, index);
        const test::GoldenSetCase golden = test::goldenSetCases("query_key")[std::size_t(index)];
        const auto model = loadModel(golden.folder(), fixture_.backend());
        const io::SafetensorsFile expected(
            (QStringLiteral(HEADLIGHT_TEST_DATA "/query_key/") + golden.name() + ".safetensors")
                .toStdString());
        const int layer = golden.json["layer"].toInt();
        CaptureRequest capture;
        capture.probabilities = false;
        capture.queriesKeys = true;
        capture.layers = {layer};
        const ModelInput input = golden.input();
        const Trace trace = model->forward(input, capture);
        QVERIFY2(std::size_t(layer) < trace.layers.size(),
                 "the golden's layer is not in the trace");
        const LayerTrace& captured = trace.layers[std::size_t(layer)];
        const ModelSpec& spec = model->spec();
        const Tensor queryXy = expected.loadF32("query_xy"), keyXy = expected.loadF32("key_xy");
        const Tensor explained = expected.loadF32("explained"), scale = expected.loadF32("scale");
        const Tensor correlation = expected.loadF32("correlation");
        QCOMPARE(queryXy.dim(0), int64_t(spec.heads));
        const double tolerance =
            test::kGoldenTolerance * std::max(1.0, qkLargestMagnitude(queryXy));
        for (int h = 0; h < spec.heads; ++h) {
            const auto e = analysis::embedQueryKeyHead(captured.queries, captured.keys, spec.heads,
                                                       spec.kvHeads, h, trace.valid);
            const QString where = QString("head %1").arg(h);
            QVERIFY2(qkCoordinateError(e.queries, queryXy, h) <= tolerance,
                     qPrintable(where + QString(": queries off by %1")
                                            .arg(qkCoordinateError(e.queries, queryXy, h))));
            QVERIFY2(
                qkCoordinateError(e.keys, keyXy, h) <= tolerance,
                qPrintable(where +
                           QString(": keys off by %1").arg(qkCoordinateError(e.keys, keyXy, h))));
            for (int c = 0; c < 2; ++c)
                QVERIFY(std::abs(e.explained[std::size_t(c)] - explained.data()[2 * h + c]) <=
                        test::kGoldenTolerance);
            QVERIFY(std::abs(e.scale - scale.data()[h]) <= test::kGoldenTolerance);
            QVERIFY(std::abs(e.distanceCorrelation - correlation.data()[h]) <=
                    test::kGoldenTolerance);
        }
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestQueryKeyGoldens)
#include "test_query_key_goldens.moc"
