// Every approximate attention kernel (LSH, FAVOR+, RFA, elu + 1, ProbSparse, Linformer,
// memory-compressed, Nyström) through the tiny BERT and GPT-2 checkpoints on the Vulkan backend
// (lavapipe in CI) against the CPU backend: the probabilities of every layer, the variant
// internals and the last hidden state, with no validation error.
#include "backend/backend.h"
#include "backend_fixture.h"
#include "compare.h"
#include "model/transformer.h"
#include "variants/variant_spec.h"

#include <QTest>

using namespace headlight;
using namespace headlight::variants;

namespace {

// f32 sums in another order, plus exp/sin on the GPU: looser than the 1e-4 of the exact path.
constexpr float kTolerance = 2e-3f;

ModelInput modelInput(int64_t tokens, bool padded) {
    ModelInput input;
    for (int64_t t = 0; t < tokens; ++t)
        input.ids.push_back(int32_t(5 + (t * 7) % 50));
    if (padded) {
        input.attentionMask.assign(std::size_t(tokens), 1);
        input.attentionMask[std::size_t(tokens - 1)] = 0;
    }
    return input;
}
} // namespace

class TestVulkanVariantKernelParity : public QObject {
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

    void cpuVulkanParity_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("kernel");
        const std::pair<const char*, AttentionKernel> kernels[] = {
            {"lsh", AttentionKernel::Lsh},
            {"favor", AttentionKernel::Favor},
            {"rfa", AttentionKernel::Rfa},
            {"linear_elu", AttentionKernel::LinearElu},
            {"probsparse", AttentionKernel::ProbSparse},
            {"linformer", AttentionKernel::Linformer},
            {"compressed", AttentionKernel::MemoryCompressed},
            {"nystrom", AttentionKernel::Nystrom},
        };
        for (const char* model : {"bert", "gpt2"})
            for (const auto& [name, kernel] : kernels) {
                const bool encoderOnly = kernel == AttentionKernel::Linformer ||
                                         kernel == AttentionKernel::MemoryCompressed ||
                                         kernel == AttentionKernel::Nystrom;
                if (QString(model) == "gpt2" && encoderOnly) continue; // refused for causal models
                QTest::newRow(qPrintable(QString("%1/%2").arg(model, name)))
                    << QString(model) << int(kernel);
            }
    }

    void cpuVulkanParity() {
        QFETCH(QString, model);
        QFETCH(int, kernel);
        VariantSpec spec;
        spec.kernel = AttentionKernel(kernel);
        spec.lshChunk = 8;
        spec.lshRounds = 2;
        spec.projected = 8;
        spec.landmarks = 8;
        spec.probSparseFactor = 2.0f;
        const std::string folder =
            std::string(HEADLIGHT_TEST_DATA) + "/models/" + model.toStdString();
        const ModelInput input = modelInput(36, model == "bert");
        CaptureRequest capture;
        capture.internals = true;
        capture.scores = true;
        const Trace gpu = loadModel(folder, vulkan_.backend())->forward(input, capture, spec);
        const Trace cpu = loadModel(folder, cpu_.backend())->forward(input, capture, spec);
        QCOMPARE(gpu.layers.size(), cpu.layers.size());
        for (std::size_t l = 0; l < cpu.layers.size(); ++l) {
            const LayerTrace &g = gpu.layers[l], &c = cpu.layers[l];
            QVERIFY2(test::maxAbsDiff(g.probabilities, c.probabilities) <= kTolerance,
                     qPrintable(QString("layer %1 probabilities").arg(l)));
            QCOMPARE(g.scores.empty(), c.scores.empty());
            QCOMPARE(g.internals.size(), c.internals.size());
            for (const auto& [name, tensor] : c.internals)
                QVERIFY2(
                    g.internals.count(name) &&
                        test::maxAbsDiff(g.internals.at(name), tensor) <= kTolerance,
                    qPrintable(
                        QString("layer %1 internal %2").arg(l).arg(QString::fromStdString(name))));
        }
        QVERIFY2(test::maxAbsDiff(gpu.lastHiddenState, cpu.lastHiddenState) <= kTolerance,
                 "last hidden state");
    }

    // Transformer-XL on GPT-2: segments of 8 with a memory of 8 and 4 compressed slots (36 tokens:
    // five segments, so rows leave the memory and pool into slots). Exact softmax path: 1e-4.
    void recurrenceCpuVulkanParity() {
        const VariantSpec spec = parseVariantSpec(
            R"({"recurrence": {"segment": 8, "memory": 8, "compressed": 4, "rate": 2}})");
        const std::string folder = std::string(HEADLIGHT_TEST_DATA) + "/models/gpt2";
        CaptureRequest capture;
        capture.internals = true;
        capture.scores = true;
        const Trace gpu =
            loadModel(folder, vulkan_.backend())->forward(modelInput(36, false), capture, spec);
        const Trace cpu =
            loadModel(folder, cpu_.backend())->forward(modelInput(36, false), capture, spec);
        QCOMPARE(gpu.layers.size(), cpu.layers.size());
        for (std::size_t l = 0; l < cpu.layers.size(); ++l) {
            QVERIFY(test::maxAbsDiff(gpu.layers[l].probabilities, cpu.layers[l].probabilities) <=
                    1e-4f);
            for (const auto& [name, tensor] : cpu.layers[l].internals)
                QVERIFY2(test::maxAbsDiff(gpu.layers[l].internals.at(name), tensor) <= 1e-4f,
                         name.c_str());
        }
        QVERIFY(cpu.layers[0].internals.count("compressed_attention"));
        QCOMPARE(test::maxAbsDiff(gpu.internals.at("segment"), cpu.internals.at("segment")), 0.0);
        QVERIFY(test::maxAbsDiff(gpu.lastHiddenState, cpu.lastHiddenState) <= 1e-4f);
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestVulkanVariantKernelParity)
#include "test_vulkan_variant_kernel_parity.moc"
