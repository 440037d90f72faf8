// The statistics streamed over rows rebuilt from queries and keys (analysis/streamed_attention.h)
// against the dense functions on the [L, H, T, T] maps the same pass captured, on each backend,
// within 1e-5: one head's map and a layer's mean rebuilt whole, per-head entropy, adjacent-layer
// JSD, the three sparsity measures, the whole rollout and single rollout rows. Models at T ≤ 512:
// the zoo's RoPE model (causal), the Mistral golden (grouped-query, sliding window), the Gemma 2
// golden (soft-capped scores, a windowed and a global layer) and the BERT golden with padding at
// the end.
#include "analysis/divergence.h"
#include "analysis/rollout.h"
#include "analysis/streamed_attention.h"
#include "atlas_dense.h"
#include "backend_fixture.h"
#include "model/transformer.h"

#include <QTest>
#include <algorithm>

using namespace headlight;
using namespace headlight::analysis;

namespace {

constexpr double kStreamTolerance = 1e-5;

struct StreamCase {
    QString folder;
    int tokens = 0;
    int paddedTail = 0;
};

StreamCase streamCaseNamed(const QString& name) {
    if (name == "rope") return {HEADLIGHT_SOURCE_DIR "/resources/models/rope", 512, 0};
    if (name == "mistral") return {HEADLIGHT_TEST_DATA "/models/mistral", 300, 0};
    if (name == "gemma2") return {HEADLIGHT_TEST_DATA "/models/gemma2", 200, 0};
    return {HEADLIGHT_TEST_DATA "/models/bert", 257, 31};
}
} // namespace

class TestStreamedAttention : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

public:
    explicit TestStreamedAttention(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void equalsTheDensePath_data() {
        QTest::addColumn<QString>("model");
        for (const char* model : {"rope", "mistral", "gemma2", "bert"})
            QTest::addRow("%s", model) << QString(model);
    }

    void equalsTheDensePath() {
        QFETCH(QString, model);
        const StreamCase c = streamCaseNamed(model);
        const auto loaded = loadModel(c.folder.toStdString(), fixture_.backend());
        CaptureRequest capture;
        capture.queriesKeys = true;
        const Trace trace = loaded->forward(
            test::randomAtlasInput(loaded->spec(), c.tokens, c.paddedTail, 11), capture);
        const Tensor dense = trace.stackedProbabilities();
        std::vector<AtlasInput> layers;
        for (const LayerTrace& layer : trace.layers)
            layers.push_back(atlasInputOf(layer, loaded->spec(), trace.valid));
        const TokenMask& valid = trace.valid;

        const StreamedStatistics streamed = streamedStatistics(layers, valid);
        const auto check = [](const char* what, const Tensor& got, const Tensor& want) {
            const double gap = test::maxAbsDiff(got, want);
            QVERIFY2(gap <= kStreamTolerance, qPrintable(QString("%1: %2").arg(what).arg(gap)));
        };
        check("entropy", streamed.entropy, attentionEntropy(dense, valid));
        check("adjacent JSD", streamed.adjacentJsd, adjacentLayerJsd(dense, valid));
        const SparsityStats sparsity = attentionSparsity(dense, valid);
        check("top-k mass", streamed.sparsity.topKMass, sparsity.topKMass);
        check("share above", streamed.sparsity.shareAboveThreshold, sparsity.shareAboveThreshold);
        check("keys for mass", streamed.sparsity.keysForMass, sparsity.keysForMass);
        // Without sparsity (the window's violins): the same entropy and JSD, no sparsity.
        const StreamedStatistics violins = streamedStatistics(layers, valid, std::nullopt);
        check("entropy without sparsity", violins.entropy, streamed.entropy);
        check("JSD without sparsity", violins.adjacentJsd, streamed.adjacentJsd);
        QVERIFY(violins.sparsity.topKMass.empty() && violins.sparsity.keysForMass.empty());

        const int64_t t = c.tokens, last = int64_t(layers.size()) - 1;
        Tensor head({t, t}), mean({t, t});
        const int64_t heads = dense.dim(1);
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t i = 0; i < t * t; ++i) {
                const float p = dense.data()[(last * heads + h) * t * t + i];
                mean.data()[i] += p / float(heads);
                if (h == 1) head.data()[i] = p;
            }
        check("map of head 1", rebuiltMap(layers.back(), 1), head);
        check("layer mean", rebuiltMap(layers.back(), AttentionAtlas::kAllHeads), mean);

        const Tensor rollout = attentionRollout(dense, valid);
        check("rollout", streamedRollout(layers, valid), rollout);
        for (const int64_t query : {int64_t(0), int64_t(c.tokens / 2), int64_t(c.tokens - 1)}) {
            const std::vector<float> row = streamedRolloutRow(layers, valid, query);
            Tensor got({1, int64_t(row.size())}, row);
            Tensor want({1, rollout.dim(1)});
            std::copy_n(rollout.data() + query * rollout.dim(1), rollout.dim(1), want.data());
            check("rollout row", got, want);
        }
    }

    void refusesBadRequests() {
        const auto loaded =
            loadModel(HEADLIGHT_SOURCE_DIR "/resources/models/rope", fixture_.backend());
        CaptureRequest capture;
        capture.probabilities = false;
        capture.queriesKeys = true;
        const Trace trace =
            loaded->forward(test::randomAtlasInput(loaded->spec(), 40, 0, 11), capture);
        const std::vector<AtlasInput> layers{atlasInputOf(trace.layers[0], loaded->spec(), {})};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, streamedStatistics({}, trace.valid));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 streamedStatistics(layers, TokenMask(39, 1)));
        try {
            streamedRolloutRow(layers, trace.valid, 40);
            QFAIL("a query past the text was accepted");
        } catch (const std::invalid_argument& error) {
            QCOMPARE(QString(error.what()), QString("rollout: query 40 is outside 0..39"));
        }
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestStreamedAttention)
#include "test_streamed_attention.moc"
