// Item 18, kNN-LM on the Vulkan backend (lavapipe in CI): the datastore built by Vulkan passes
// holds the CPU's keys within 1e-4, and the mixed pass reads the same LM head logits. The
// identities of the search itself are tests/unit/test_knn_lm.cpp.
#include "backend/backend.h"
#include "golden.h"
#include "model/transformer.h"
#include "tokenize/tokenizer.h"
#include "variants/knn_lm.h"
#include "vulkan_fixture.h"

#include <QTest>

using namespace headlight;

namespace {
std::vector<std::vector<int32_t>> datastoreChunks(const std::string& folder,
                                                  const ModelSpec& spec) {
    const std::string text = variants::readDatastoreText(HEADLIGHT_TEST_DATA "/knn/datastore.txt");
    const std::vector<int> ids =
        tokenize::Tokenizer::load(folder)->encode(text, std::nullopt, false).ids;
    return variants::chunkForDatastore(std::vector<int32_t>(ids.begin(), ids.end()),
                                       variants::datastoreChunkLength(spec));
}
} // namespace

class TestVulkanKnnLm : public QObject {
    Q_OBJECT
    std::shared_ptr<vk::Context> context_;
    std::unique_ptr<Backend> cpu_ = makeCpuBackend(), vulkan_;

private Q_SLOTS:
    void initTestCase() {
        context_ = test::makeContext();
        vulkan_ = makeVulkanBackend(context_);
    }
    void cleanupTestCase() {
        vulkan_.reset();
        test::verifyNoValidationErrors(*context_);
    }

    void datastoreAndMixtureMatchTheCpu() {
        const std::string folder = (test::goldenRoot() + "/gpt2").toStdString();
        const auto onCpu = loadModel(folder, *cpu_);
        const auto onVulkan = loadModel(folder, *vulkan_);
        const auto chunks = datastoreChunks(folder, onCpu->spec());
        QVERIFY(chunks.size() > 1);
        const variants::KnnDatastore cpuStore = variants::buildDatastore(*onCpu, chunks);
        const variants::KnnDatastore vulkanStore = variants::buildDatastore(*onVulkan, chunks);
        QVERIFY(vulkanStore.values == cpuStore.values);
        QVERIFY(test::maxAbsDiff(vulkanStore.keys, cpuStore.keys) < 1e-4);

        const variants::VariantSpec spec =
            variants::parseVariantSpec(R"({"knn": {"datastore": "a.txt", "k": 4, "lambda": 0}})");
        CaptureRequest capture;
        capture.internals = capture.logits = true;
        const ModelInput input{{40, 41, 42, 43, 44, 45, 46, 47}, {}, {}};
        const Trace cpu = variants::forwardKnn(*onCpu, input, capture, spec, cpuStore);
        const Trace vulkan = variants::forwardKnn(*onVulkan, input, capture, spec, vulkanStore);
        QVERIFY(test::maxAbsDiff(vulkan.logits, cpu.logits) < 1e-4);
        QVERIFY(test::maxAbsDiff(vulkan.internals.at("p_lm"), cpu.internals.at("p_lm")) < 1e-5);
        QVERIFY(test::maxAbsDiff(vulkan.internals.at("p_mix"), vulkan.internals.at("p_lm")) == 0.0);
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestVulkanKnnLm)
#include "test_vulkan_knn_lm.moc"
