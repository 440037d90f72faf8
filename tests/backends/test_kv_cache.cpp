// The KV cache and the reuse of earlier layers (model/kv_cache.h) on each backend: for golden
// Llama, Qwen2, GPT-2, Mistral (sliding window), Gemma 2 (soft-capped, windowed and global layers)
// and two zoo causal models, a pass reusing a cached prefix (tokens appended, one token appended,
// the tail edited) and a pass starting at a toggled layer give every captured tensor of a full
// pass within 1e-5 (relative to the tensor's largest value where that exceeds 1: Qwen2's scores
// reach the tens, where f32 rounding of the two summation orders alone is ~1e-5); what cannot be
// reused (both-way attention, mean ablation, padding) runs in full and says why; a pass stops
// between layers when its control cancels it.
#include "backend_fixture.h"
#include "golden.h"
#include "model/transformer.h"

#include <QTest>
#include <algorithm>
#include <cmath>
#include <limits>

using namespace headlight;

namespace {

constexpr double kTolerance = 1e-5;

QString modelFolder(const QString& name) {
    return name.startsWith("zoo/")
               ? QStringLiteral(HEADLIGHT_SOURCE_DIR "/resources/models/") + name.mid(4)
               : test::goldenRoot() + "/" + name;
}

// Ids spread over the vocabulary, the same on every run.
std::vector<int32_t> idsOf(int64_t count, int vocabulary, int salt = 0) {
    std::vector<int32_t> ids;
    for (int64_t i = 0; i < count; ++i)
        ids.push_back(int32_t((i * 37 + 11 + salt * 53) % (vocabulary - 3) + 3));
    return ids;
}

ModelInput inputOf(std::vector<int32_t> ids) {
    ModelInput input;
    input.ids = std::move(ids);
    return input;
}

CaptureRequest everything(const TransformerModel& model) {
    CaptureRequest capture;
    capture.scores = true;
    capture.hiddenStates = true;
    capture.internals = true;
    capture.logits = model.hasLmHead();
    capture.headOutputs = true;
    capture.queriesKeys = true;
    capture.sublayers = true;
    capture.residualBeforeFinalNorm = true;
    return capture;
}

// The largest |a − b| over max(1, the largest |b|) (test::compareValues: infinity for shapes that
// differ, a NaN or an infinity on either side). Masked scores (the lowest f32) must match exactly
// and are left out of the comparison and the scale.
double difference(const Tensor& a, const Tensor& b, QString* where) {
    constexpr float masked = std::numeric_limits<float>::lowest();
    if (a.shape() == b.shape())
        for (std::size_t i = 0; i < a.size(); ++i)
            if ((a.values()[i] == masked) != (b.values()[i] == masked)) {
                *where = QStringLiteral("masked on one side only at index %1").arg(i);
                return INFINITY;
            }
    const test::Difference d =
        test::compareValues(a, b, [&](std::size_t i) { return b.values()[i] != masked; });
    *where = d.where;
    return d.maxAbs / d.scale;
}

// A tensor neither pass captured is empty on both sides; any other is compared.
void compareTensor(const Tensor& cached, const Tensor& full, const QString& what) {
    if (full.empty()) {
        QVERIFY2(cached.empty(), qPrintable(what + " captured by the cached pass only"));
        return;
    }
    QString where;
    const double d = difference(cached, full, &where);
    QVERIFY2(d <= kTolerance,
             qPrintable(QStringLiteral("%1 differs by %2 (%3)").arg(what).arg(d).arg(where)));
}

void compareTraces(const Trace& cached, const Trace& full) {
    QCOMPARE(cached.ids, full.ids);
    QCOMPARE(cached.valid, full.valid);
    // Why: readers of a hook (an SAE) refuse a trace whose depth loop seems to have stopped early.
    QCOMPARE(cached.layersRun, full.layersRun);
    QCOMPARE(cached.layers.size(), full.layers.size());
    for (std::size_t l = 0; l < full.layers.size(); ++l) {
        const LayerTrace &a = cached.layers[l], &b = full.layers[l];
        const QString layer = QStringLiteral("layer %1 ").arg(l);
        QVERIFY(!b.probabilities.empty());
        compareTensor(a.probabilities, b.probabilities, layer + "probabilities");
        compareTensor(a.scores, b.scores, layer + "scores");
        compareTensor(a.headOutputs, b.headOutputs, layer + "head outputs");
        compareTensor(a.queries, b.queries, layer + "queries");
        compareTensor(a.keys, b.keys, layer + "keys");
        compareTensor(a.attentionOutput, b.attentionOutput, layer + "attention output");
        compareTensor(a.residualMid, b.residualMid, layer + "residual mid");
        compareTensor(a.mlpInput, b.mlpInput, layer + "MLP input");
        compareTensor(a.mlpOutput, b.mlpOutput, layer + "MLP output");
        QCOMPARE(a.heads, b.heads);
        QCOMPARE(a.internals.size(), b.internals.size());
    }
    QCOMPARE(cached.hiddenStates.size(), full.hiddenStates.size());
    for (std::size_t i = 0; i < full.hiddenStates.size(); ++i)
        compareTensor(cached.hiddenStates[i], full.hiddenStates[i],
                      QStringLiteral("hidden state %1").arg(i));
    compareTensor(cached.lastHiddenState, full.lastHiddenState, "last hidden state");
    compareTensor(cached.residualBeforeFinalNorm, full.residualBeforeFinalNorm,
                  "residual before the final norm");
    compareTensor(cached.logits, full.logits, "logits");
}

variants::Intervention knockout(int layer, int head, variants::AblationMode mode) {
    variants::Intervention intervention;
    intervention.heads.push_back({{layer, head, mode}, {}});
    return intervention;
}
} // namespace

class TestKvCache : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

public:
    explicit TestKvCache(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void causalModels_data() {
        QTest::addColumn<QString>("model");
        for (const char* name :
             {"llama", "qwen2", "gpt2", "mistral", "gemma2", "zoo/rope", "zoo/pre_ln"})
            QTest::newRow(name) << QString::fromLatin1(name);
    }

    // Appended tokens, one appended token and an edited tail reuse the kept prefix.
    void prefixReuseEqualsFullPass_data() { causalModels_data(); }
    void prefixReuseEqualsFullPass() {
        QFETCH(QString, model);
        const auto loaded = loadModel(modelFolder(model).toStdString(), fixture_.backend());
        const CaptureRequest capture = everything(*loaded);
        const std::vector<int32_t> ids = idsOf(24, loaded->spec().vocabSize);
        const auto prefix = [&](int64_t count) {
            return std::vector<int32_t>(ids.begin(), ids.begin() + count);
        };
        KvCache cache;
        loaded->forwardCached(cache, inputOf(prefix(15)), capture);
        QCOMPARE(cache.lastDecision(), std::string("full pass"));

        Trace cached = loaded->forwardCached(cache, inputOf(prefix(23)), capture);
        QCOMPARE(cache.lastDecision(), std::string("positions 0..14 kept"));
        compareTraces(cached, loaded->forward(inputOf(prefix(23)), capture));

        cached = loaded->forwardCached(cache, inputOf(ids), capture);
        QCOMPARE(cache.lastDecision(), std::string("positions 0..22 kept"));
        compareTraces(cached, loaded->forward(inputOf(ids), capture));

        std::vector<int32_t> edited = ids;
        edited[19] = ids[3];
        edited.resize(22);
        cached = loaded->forwardCached(cache, inputOf(edited), capture);
        QCOMPARE(cache.lastDecision(), std::string("positions 0..18 kept"));
        compareTraces(cached, loaded->forward(inputOf(edited), capture));

        cached = loaded->forwardCached(cache, inputOf(edited), capture);
        QCOMPARE(cache.lastDecision(), std::string("the same request: its kept trace"));
        compareTraces(cached, loaded->forward(inputOf(edited), capture));
    }

    // A generation loop: 40 tokens appended one at a time, each pass sharing the kept rows of the
    // one before (past the bound on shared blocks, where they are joined into one), then a
    // shorter edit cutting into a shared block; each equals a full pass.
    void appendsOneTokenAtATime() {
        const auto loaded = loadModel(modelFolder("llama").toStdString(), fixture_.backend());
        const CaptureRequest capture = everything(*loaded);
        const std::vector<int32_t> ids = idsOf(50, loaded->spec().vocabSize, 2);
        const auto prefix = [&](int64_t count) {
            return inputOf(std::vector<int32_t>(ids.begin(), ids.begin() + count));
        };
        KvCache cache;
        loaded->forwardCached(cache, prefix(10), capture);
        for (int64_t count = 11; count <= 50; ++count) {
            const Trace cached = loaded->forwardCached(cache, prefix(count), capture);
            QCOMPARE(cache.lastDecision(), "positions 0.." + std::to_string(count - 2) + " kept");
            if (count % 13 == 0 || count == 50)
                compareTraces(cached, loaded->forward(prefix(count), capture));
        }
        std::vector<int32_t> edited(ids.begin(), ids.begin() + 30);
        edited.back() = ids[40];
        const Trace cached = loaded->forwardCached(cache, inputOf(edited), capture);
        QCOMPARE(cache.lastDecision(), std::string("positions 0..28 kept"));
        compareTraces(cached, loaded->forward(inputOf(edited), capture));
    }

    // A knockout toggled in a layer reuses the layers before it, with or without a prefix kept.
    void layerReuseEqualsFullPass_data() { causalModels_data(); }
    void layerReuseEqualsFullPass() {
        QFETCH(QString, model);
        const auto loaded = loadModel(modelFolder(model).toStdString(), fixture_.backend());
        const CaptureRequest capture = everything(*loaded);
        const ModelInput input = inputOf(idsOf(20, loaded->spec().vocabSize, 1));
        const int last = loaded->spec().layers - 1;
        KvCache cache;
        loaded->forwardCached(cache, input, capture);
        const variants::Intervention lastLayer = knockout(last, 1, variants::AblationMode::Zero);
        Trace cached = loaded->forwardCached(cache, input, capture, {}, lastLayer);
        QCOMPARE(cache.lastDecision(), "layers 0.." + std::to_string(last - 1) + " kept");
        compareTraces(cached, loaded->forward(input, capture, {}, lastLayer));

        // Appending under the knockout keeps the prefix of the knocked-out pass.
        const ModelInput longer = inputOf(idsOf(22, loaded->spec().vocabSize, 1));
        cached = loaded->forwardCached(cache, longer, capture, {}, lastLayer);
        QCOMPARE(cache.lastDecision(), std::string("positions 0..19 kept"));
        compareTraces(cached, loaded->forward(longer, capture, {}, lastLayer));

        // A mean ablation reads every position: the layers before it are still reused ...
        const variants::Intervention mean = knockout(last, 0, variants::AblationMode::Mean);
        cached = loaded->forwardCached(cache, input, capture, {}, mean);
        QCOMPARE(cache.lastDecision(), "layers 0.." + std::to_string(last - 1) + " kept");
        compareTraces(cached, loaded->forward(input, capture, {}, mean));

        // ... but no prefix.
        const ModelInput appended = inputOf(idsOf(23, loaded->spec().vocabSize, 1));
        cached = loaded->forwardCached(cache, appended, capture, {}, mean);
        QCOMPARE(
            cache.lastDecision(),
            std::string(
                "full pass; no prefix reuse: a mean or replaced head output reads every position"));
        compareTraces(cached, loaded->forward(appended, capture, {}, mean));
    }

    // BERT attends both ways: no prefix is reused, a toggle still reuses the layers before it.
    void bidirectionalModelReusesLayersOnly() {
        const auto loaded = loadModel(modelFolder("bert").toStdString(), fixture_.backend());
        const CaptureRequest capture = everything(*loaded);
        const std::vector<int32_t> ids = idsOf(12, loaded->spec().vocabSize);
        KvCache cache;
        loaded->forwardCached(cache, inputOf(std::vector<int32_t>(ids.begin(), ids.end() - 1)),
                              capture);
        const Trace appended = loaded->forwardCached(cache, inputOf(ids), capture);
        QCOMPARE(cache.lastDecision(),
                 std::string("full pass; no prefix reuse: the model attends "
                             "both ways, so a position depends on later ones"));
        compareTraces(appended, loaded->forward(inputOf(ids), capture));
        const variants::Intervention toggle = knockout(1, 0, variants::AblationMode::Zero);
        const Trace toggled = loaded->forwardCached(cache, inputOf(ids), capture, {}, toggle);
        QCOMPARE(cache.lastDecision(), std::string("layers 0..0 kept"));
        compareTraces(toggled, loaded->forward(inputOf(ids), capture, {}, toggle));
    }

    void paddingIsNotCached() {
        const auto loaded = loadModel(modelFolder("llama").toStdString(), fixture_.backend());
        ModelInput input = inputOf(idsOf(10, loaded->spec().vocabSize));
        input.attentionMask.assign(10, 1);
        input.attentionMask[0] = 0;
        KvCache cache;
        const Trace trace = loaded->forwardCached(cache, input, {});
        QCOMPARE(
            cache.lastDecision(),
            std::string(
                "full pass; no prefix reuse: a padded row attends every key, later ones included"));
        compareTraces(trace, loaded->forward(input));
    }

    // The control stops the pass after the layer it is in, having reported that layer.
    void cancelStopsBetweenLayers() {
        const auto loaded = loadModel(modelFolder("gpt2").toStdString(), fixture_.backend());
        std::vector<int> reported;
        PassControl control;
        control.progress = [&](int done, int total) {
            reported.push_back(done);
            QCOMPARE(total, loaded->spec().layers);
        };
        control.cancelled = [&] { return !reported.empty(); };
        KvCache cache;
        QVERIFY_THROWS_EXCEPTION(PassCancelled, loaded->forwardCached(cache, inputOf(idsOf(8, 100)),
                                                                      {}, {}, {}, control));
        QCOMPARE(reported, std::vector<int>{1});
        QCOMPARE(cache.size(), std::size_t(0)); // nothing half-computed is kept
        control.cancelled = {};
        reported.clear();
        loaded->forward(inputOf(idsOf(8, 100)), {}, {}, {}, control);
        QCOMPARE(reported, (std::vector<int>{1, 2}));
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestKvCache)
#include "test_kv_cache.moc"
