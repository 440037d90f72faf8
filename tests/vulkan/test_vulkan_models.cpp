// Every golden architecture on the Vulkan backend (lavapipe in CI) node by node against the CPU
// backend (embeddings, each layer's pre-softmax scores, probabilities and output state) within
// 1e-4, with no validation error; both backends must give the golden's count of hidden states and
// of layers, each map in the golden's shape. The same checkpoints against the float64 NumPy
// reference's golden tensors, on each backend: tests/backends/test_golden_models.cpp.
#include "backend/backend.h"
#include "backend_fixture.h"
#include "golden.h"
#include "model/transformer.h"

#include <QTest>

using namespace headlight;

namespace {
// Scores of masked keys are the lowest float on both backends; compare only unmasked entries.
bool finiteScore(float a) {
    return a > -1e30f;
}
} // namespace

class TestVulkanModels : public QObject {
    Q_OBJECT
    test::BackendFixture vulkan_{BackendKind::Vulkan}, cpu_{BackendKind::Cpu};

private Q_SLOTS:
    void initTestCase() {
        vulkan_.open();
        cpu_.open();
    }
    void cleanupTestCase() {
        vulkan_.close();
        cpu_.close();
    }

    void nodeByNodeParity_data() {
        QTest::addColumn<int>("index");
        const auto cases = test::goldenCases();
        QVERIFY(!cases.empty());
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(qPrintable(cases[i].model + "/" + cases[i].name())) << int(i);
    }

    void nodeByNodeParity() {
        QFETCH(int, index);
        const test::GoldenCase golden = test::goldenCases()[std::size_t(index)];
        const io::SafetensorsFile expected(golden.tensorsPath().toStdString());
        const ModelInput input = test::goldenInput(expected);
        CaptureRequest capture;
        capture.hiddenStates = true;
        capture.scores = true;

        const auto onGpu = loadModel(golden.folder.toStdString(), vulkan_.backend());
        const auto onCpu = loadModel(golden.folder.toStdString(), cpu_.backend());
        const Trace gpu = onGpu->forward(input, capture), cpu = onCpu->forward(input, capture);

        // The counts and shapes come from the golden: two backends that both drop a layer
        // would otherwise agree on what is left.
        const Tensor goldenAttentions = expected.loadF32("attentions"); // [L, H, T, T]
        const auto goldenLayers = std::size_t(goldenAttentions.dim(0));
        const std::vector<int64_t> mapShape(goldenAttentions.shape().begin() + 1,
                                            goldenAttentions.shape().end());
        const Tensor goldenHidden = expected.loadF32("hidden_states"); // [L + 1, T, D]
        const auto goldenStates = std::size_t(goldenHidden.dim(0));
        const std::vector<int64_t> stateShape{goldenHidden.dim(1), goldenHidden.dim(2)};
        QString where;
        QCOMPARE(cpu.hiddenStates.size(), goldenStates);
        QCOMPARE(gpu.hiddenStates.size(), goldenStates);
        QCOMPARE(cpu.layers.size(), goldenLayers);
        QCOMPARE(gpu.layers.size(), goldenLayers);
        for (std::size_t n = 0; n < gpu.hiddenStates.size(); ++n) {
            QCOMPARE(cpu.hiddenStates[n].shape(), stateShape);
            QVERIFY2(test::maxAbsDiff(gpu.hiddenStates[n], cpu.hiddenStates[n], &where) <=
                         test::parityTolerance(golden.model),
                     qPrintable(QString("hidden state %1: ").arg(n) + where));
        }
        for (std::size_t l = 0; l < gpu.layers.size(); ++l) {
            const Tensor& gs = gpu.layers[l].scores;
            const Tensor& cs = cpu.layers[l].scores;
            QCOMPARE(cs.shape(), mapShape);
            QCOMPARE(cpu.layers[l].probabilities.shape(), mapShape);
            QVERIFY2(test::maxAbsDiff(
                         gs, cs, [&](std::size_t i) { return finiteScore(cs.data()[i]); },
                         &where) <= test::parityTolerance(golden.model),
                     qPrintable(QString("layer %1 scores: ").arg(l) + where));
            QVERIFY2(test::maxAbsDiff(gpu.layers[l].probabilities, cpu.layers[l].probabilities,
                                      &where) <= test::parityTolerance(golden.model),
                     qPrintable(QString("layer %1 probabilities: ").arg(l) + where));
        }
    }

    void selectiveCaptureReadsBackOnlyWhatWasAsked() {
        const QString folder = test::goldenRoot() + "/llama";
        const auto model = loadModel(folder.toStdString(), vulkan_.backend());
        CaptureRequest capture;
        capture.layers = {1};
        const Trace trace = model->forward({{1, 5, 9, 13}, {}, {}}, capture);
        QVERIFY(trace.layers[0].probabilities.empty());
        QCOMPARE(trace.layers[1].probabilities.shape(), (std::vector<int64_t>{4, 4, 4}));
        QVERIFY(trace.layers[1].scores.empty());
        QVERIFY(trace.hiddenStates.empty());
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestVulkanModels)
#include "test_vulkan_models.moc"
