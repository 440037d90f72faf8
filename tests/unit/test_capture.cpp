// Selective capture: only the asked-for layers, heads and tensors are kept, they equal the same
// slices of a full capture, and asking for a layer or head that does not exist is refused.
#include <QTest>

#include "backend/backend.h"
#include "golden.h"
#include "model/transformer.h"

using namespace headlight;

class TestCapture : public QObject {
    Q_OBJECT
    std::unique_ptr<Backend> backend_ = makeCpuBackend();
    std::unique_ptr<TransformerModel> model_;
    const ModelInput input_{{2, 40, 41, 42, 3}, {}, {}};

private Q_SLOTS:
    void initTestCase() { model_ = loadModel((test::goldenRoot() + "/bert").toStdString(), *backend_); }

    void keepsOnlyAskedLayersAndHeads() {
        const Trace full = model_->forward(input_);
        CaptureRequest some;
        some.layers = {1};
        some.heads = {2, 0};
        some.scores = true;
        const Trace part = model_->forward(input_, some);
        QVERIFY(part.layers[0].probabilities.empty() && part.layers[0].scores.empty());
        QCOMPARE(part.layers[1].heads, (std::vector<int>{2, 0}));
        QCOMPARE(part.layers[1].probabilities.shape(), (std::vector<int64_t>{2, 5, 5}));
        const Tensor expected = selectHeads(full.layers[1].probabilities, {2, 0});
        QCOMPARE(test::maxAbsDiff(part.layers[1].probabilities, expected), 0.0);
        QCOMPARE(part.layers[1].scores.shape(), (std::vector<int64_t>{2, 5, 5}));
        QVERIFY(part.hiddenStates.empty());
        QCOMPARE(test::maxAbsDiff(part.lastHiddenState, full.lastHiddenState), 0.0);
    }

    void nothingCapturedStillRuns() {
        CaptureRequest none;
        none.probabilities = false;
        const Trace trace = model_->forward(input_, none);
        for (const LayerTrace& layer : trace.layers) QVERIFY(layer.probabilities.empty());
        QCOMPARE(trace.lastHiddenState.shape(), (std::vector<int64_t>{5, model_->spec().hidden}));
        QVERIFY_THROWS_EXCEPTION(std::logic_error, trace.stackedProbabilities());
    }

    void refusesLayersAndHeadsThatDoNotExist() {
        CaptureRequest badLayer;
        badLayer.layers = {7};
        try {
            model_->forward(input_, badLayer);
            QFAIL("expected ModelError");
        } catch (const ModelError& e) {
            QCOMPARE(QString(e.what()), QString("layer 7 does not exist (the model has 2)"));
        }
        CaptureRequest badHead;
        badHead.heads = {-1};
        QVERIFY_THROWS_EXCEPTION(ModelError, model_->forward(input_, badHead));
    }

    void emptyInputIsRefused() {
        try {
            model_->forward({});
            QFAIL("expected ModelError");
        } catch (const ModelError& e) {
            QCOMPARE(QString(e.what()), QString("empty input: there are no tokens to run"));
        }
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestCapture)
#include "test_capture.moc"
