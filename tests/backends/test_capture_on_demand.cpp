// Capture on demand, on each backend: a pass that needs only the layers up to l stops after
// layer l (Trace::layersRun counts the layers the loop ran, and the captured maps equal a full
// pass's exactly), while a pass whose loop carries state across the depth (ACT, early exit) or
// that needs the final state still runs every layer; and the test suite's guard
// (HEADLIGHT_MAP_CAPTURE_TOKENS, model/capture_limit.h) refuses whole maps past its length while
// queries and keys of the same text pass. A pass that wants the last layer's queries and keys
// alone stops once they are made, and they equal a full pass's on every block wiring (post-norm,
// pre-norm, ReZero, windowed).
#include "backend_fixture.h"
#include "golden.h"
#include "model/capture_limit.h"
#include "model/transformer.h"

#include <QTest>

using namespace headlight;

namespace {

ModelInput countingInput(int tokens, int vocabulary) {
    ModelInput input;
    for (int t = 0; t < tokens; ++t)
        input.ids.push_back(5 + (t * 7) % (vocabulary - 5));
    return input;
}

CaptureRequest onlyLayers(std::vector<int> layers) {
    CaptureRequest capture;
    capture.layers = std::move(layers);
    capture.scores = true;
    capture.queriesKeys = true;
    capture.finalState = false;
    return capture;
}
} // namespace

class TestCaptureOnDemand : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

public:
    explicit TestCaptureOnDemand(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void stopsAfterTheLastCapturedLayer_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("layer");
        QTest::addRow("bert layer 0") << "bert" << 0;
        QTest::addRow("mistral layer 1") << "mistral" << 1;
        QTest::addRow("llama layer 0") << "llama" << 0;
    }

    void stopsAfterTheLastCapturedLayer() {
        QFETCH(QString, model);
        QFETCH(int, layer);
        const auto loaded =
            loadModel((test::goldenRoot() + "/" + model).toStdString(), fixture_.backend());
        const ModelInput input = countingInput(9, loaded->spec().vocabSize);
        CaptureRequest everything;
        everything.scores = true;
        everything.queriesKeys = true;
        const Trace full = loaded->forward(input, everything);
        QCOMPARE(full.layersRun, loaded->spec().layers);

        const Trace part = loaded->forward(input, onlyLayers({layer}));
        QCOMPARE(part.layersRun, layer + 1);
        QVERIFY(part.lastHiddenState.empty());
        const LayerTrace& got = part.layers[std::size_t(layer)];
        const LayerTrace& want = full.layers[std::size_t(layer)];
        QCOMPARE(test::maxAbsDiff(got.probabilities, want.probabilities), 0.0);
        QCOMPARE(test::maxAbsDiff(got.scores, want.scores), 0.0);
        QCOMPARE(test::maxAbsDiff(got.queries, want.queries), 0.0);
        QCOMPARE(test::maxAbsDiff(got.keys, want.keys), 0.0);
        for (std::size_t l = std::size_t(layer) + 1; l < part.layers.size(); ++l)
            QVERIFY(part.layers[l].probabilities.empty());
    }

    void stopsAtTheQueriesAndKeysOfTheLastLayer_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("layer");
        const QString zoo = HEADLIGHT_SOURCE_DIR "/resources/models/";
        QTest::addRow("bert layer 1") << test::goldenRoot() + "/bert" << 1;
        QTest::addRow("llama layer 1") << test::goldenRoot() + "/llama" << 1;
        QTest::addRow("mistral layer 2") << test::goldenRoot() + "/mistral" << 2;
        QTest::addRow("zoo rezero layer 1") << zoo + "rezero" << 1;
        QTest::addRow("zoo post_ln layer 0") << zoo + "post_ln" << 0;
    }

    void stopsAtTheQueriesAndKeysOfTheLastLayer() {
        QFETCH(QString, model);
        QFETCH(int, layer);
        const auto loaded = loadModel(model.toStdString(), fixture_.backend());
        const ModelInput input = countingInput(11, loaded->spec().vocabSize);
        CaptureRequest everything;
        everything.queriesKeys = true;
        const Trace full = loaded->forward(input, everything);
        CaptureRequest alone = onlyLayers({layer});
        alone.scores = false;
        alone.probabilities = false;
        const Trace part = loaded->forward(input, alone);
        QCOMPARE(part.layersRun, layer + 1);
        QVERIFY(part.lastHiddenState.empty());
        const LayerTrace& got = part.layers[std::size_t(layer)];
        const LayerTrace& want = full.layers[std::size_t(layer)];
        QVERIFY(got.probabilities.empty());
        QCOMPARE(test::maxAbsDiff(got.queries, want.queries), 0.0);
        QCOMPARE(test::maxAbsDiff(got.keys, want.keys), 0.0);
        QCOMPARE(got.attentionRule.scale, want.attentionRule.scale);
        QCOMPARE(got.attentionRule.slidingWindow, want.attentionRule.slidingWindow);
    }

    // The final state, logits or hidden states need the last layer: the pass runs them all.
    void runsEveryLayerWhenLaterOnesAreNeeded() {
        const auto loaded =
            loadModel((test::goldenRoot() + "/mistral").toStdString(), fixture_.backend());
        const ModelInput input = countingInput(9, loaded->spec().vocabSize);
        CaptureRequest withState = onlyLayers({0});
        withState.finalState = true;
        CaptureRequest withHidden = onlyLayers({0});
        withHidden.hiddenStates = true;
        CaptureRequest withLogits = onlyLayers({0});
        withLogits.logits = true;
        for (const CaptureRequest& capture : {withState, withHidden, withLogits}) {
            const Trace trace = loaded->forward(input, capture);
            QCOMPARE(trace.layersRun, 3);
            QCOMPARE(trace.lastHiddenState.dim(0), int64_t(9));
        }
    }

    // ACT repeats one layer until each token halts, and early exit judges every layer: their
    // loops run to the end whatever the capture.
    void loopsThatNeedTheWholeDepthRunIt() {
        const auto act =
            loadModel(HEADLIGHT_SOURCE_DIR "/resources/models/ut_act", fixture_.backend());
        CaptureRequest firstStep = onlyLayers({0});
        firstStep.queriesKeys = false; // the atlas's queries and keys are the plain stack's
        const Trace halting = act->forward(countingInput(7, act->spec().vocabSize), firstStep);
        QCOMPARE(halting.layersRun, int(halting.layers.size()));
        QVERIFY(!halting.lastHiddenState.empty());

        const auto gpt2 =
            loadModel((test::goldenRoot() + "/gpt2").toStdString(), fixture_.backend());
        const variants::VariantSpec exits = variants::parseVariantSpec(
            R"({"early_exit": {"criterion": "entropy", "threshold": -1}})");
        const Trace judged =
            gpt2->forward(countingInput(7, gpt2->spec().vocabSize), onlyLayers({0}), exits);
        QCOMPARE(judged.layersRun, gpt2->spec().layers);
        QVERIFY(!judged.lastHiddenState.empty());
    }

    // tests/CMakeLists.txt sets HEADLIGHT_MAP_CAPTURE_TOKENS=1024 for every test.
    void guardRefusesWholeMapsOfLongTexts() {
        QCOMPARE(mapCaptureTokenLimit().value_or(0), int64_t(1024));
        const auto loaded =
            loadModel(HEADLIGHT_SOURCE_DIR "/resources/models/rope", fixture_.backend());
        const ModelInput input = countingInput(1025, loaded->spec().vocabSize);
        CaptureRequest maps;
        maps.layers = {0};
        maps.finalState = false;
        try {
            loaded->forward(input, maps);
            QFAIL("maps of 1025 tokens were captured");
        } catch (const ModelError& error) {
            QCOMPARE(QString(error.what()),
                     QString("capturing attention maps of 1025 tokens is over "
                             "HEADLIGHT_MAP_CAPTURE_TOKENS = 1024: capture queries and keys and "
                             "rebuild the maps on demand"));
        }
        CaptureRequest queriesKeys = maps;
        queriesKeys.probabilities = false;
        queriesKeys.queriesKeys = true;
        const Trace trace = loaded->forward(input, queriesKeys);
        QCOMPARE(trace.layers[0].queries.dim(0), int64_t(1025));
        QCOMPARE(trace.layersRun, 1);
        QVERIFY(!loaded->forward(countingInput(1024, loaded->spec().vocabSize), maps)
                     .layers[0]
                     .probabilities.empty());
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestCaptureOnDemand)
#include "test_capture_on_demand.moc"
