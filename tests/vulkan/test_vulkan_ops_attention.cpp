// Parity of the Vulkan attention kernel with the CPU backend (bidirectional with padding, causal,
// sliding window, grouped-query heads, rows whose keys are all masked, T = 1, captured scores and
// probabilities, Gemma 2's soft-capped scores), and of every op on tensors split over several
// storage buffers under a forced 8 KiB binding limit. Tolerances: test_vulkan_ops_support.h.
#include "backend/vulkan/vk_error.h"
#include "test_vulkan_ops_support.h"
#include "vulkan_fixture.h"

#include <QTest>
#include <limits>

using namespace headlight;
using test::Both;

namespace {
constexpr float kLowest = std::numeric_limits<float>::lowest();

struct AttentionCase {
    int heads, kvHeads, headDim, T;
    bool causal;
    int window;
    int paddedFront, paddedBack; // keys marked invalid at either end
};

} // namespace
Q_DECLARE_METATYPE(AttentionCase)
namespace {

AttentionParams paramsFor(const AttentionCase& c) {
    AttentionParams p;
    p.heads = c.heads;
    p.kvHeads = c.kvHeads;
    p.headDim = c.headDim;
    p.scale = 1.0f / std::sqrt(float(c.headDim));
    p.causal = c.causal;
    p.slidingWindow = c.window;
    if (c.paddedFront + c.paddedBack > 0) {
        p.keyValid.assign(std::size_t(c.T), 1);
        for (int j = 0; j < c.paddedFront; ++j)
            p.keyValid[std::size_t(j)] = 0;
        for (int j = c.T - c.paddedBack; j < c.T; ++j)
            p.keyValid[std::size_t(j)] = 0;
    }
    return p;
}

// Masked scores are the lowest f32 on both sides, exactly; the rest compare as usual.
bool scoresMatch(const Tensor& got, const Tensor& want) {
    Tensor g = got, w = want;
    for (std::size_t i = 0; i < w.size(); ++i) {
        if ((w.values()[i] == kLowest) != (g.values()[i] == kLowest)) {
            qWarning("scores: element %zu is masked on one backend only", i);
            return false;
        }
        if (w.values()[i] == kLowest) g.values()[i] = w.values()[i] = 0.0f;
    }
    return test::closeEnough(g, w, "scores");
}
} // namespace

class TestVulkanOpsAttention : public QObject {
    Q_OBJECT
    std::shared_ptr<vk::Context> context_;
    std::unique_ptr<test::BackendPair> pair_, chunked_;

    // Runs one attention case on both backends of `pair`; checks context, scores and probs.
    void checkAttention(test::BackendPair& pair, const AttentionCase& c, bool capture,
                        float softcap = 0.0f) {
        AttentionParams p = paramsFor(c);
        p.softcap = softcap;
        const Both q = pair.upload(test::randomTensor({c.T, c.heads * c.headDim}, 30, -2.0f, 2.0f));
        const Both k =
            pair.upload(test::randomTensor({c.T, c.kvHeads * c.headDim}, 31, -2.0f, 2.0f));
        const Both v = pair.upload(test::randomTensor({c.T, c.kvHeads * c.headDim}, 32));
        Both context = pair.output({c.T, c.heads * c.headDim});
        Both scores = pair.output({c.heads, c.T, c.T}), probs = pair.output({c.heads, c.T, c.T});
        pair.gpu().attention(q.gpu, k.gpu, v.gpu, p, context.gpu, capture ? &scores.gpu : nullptr,
                             capture ? &probs.gpu : nullptr);
        pair.cpu().attention(q.cpu, k.cpu, v.cpu, p, context.cpu, &scores.cpu, &probs.cpu);
        QVERIFY(pair.matches(context, "context"));
        if (!capture) return;
        QVERIFY(pair.matches(probs, "probs"));
        QVERIFY(vk::storageOf(scores.gpu).guardsIntact());
        QVERIFY(scoresMatch(pair.gpu().download(scores.gpu), pair.cpu().download(scores.cpu)));
    }

private Q_SLOTS:
    void initTestCase() {
        context_ = test::makeContext();
        pair_ = std::make_unique<test::BackendPair>(context_, vk::VulkanBackendOptions{0, 1});
        chunked_ = std::make_unique<test::BackendPair>(context_, vk::VulkanBackendOptions{8192, 1});
    }
    void cleanupTestCase() {
        pair_.reset();
        chunked_.reset();
        test::verifyNoValidationErrors(*context_);
    }

    void attentionMatchesCpu_data() {
        QTest::addColumn<AttentionCase>("c");
        QTest::addColumn<bool>("capture");
        QTest::newRow("bidirectional, padded end")
            << AttentionCase{4, 4, 16, 33, false, 0, 0, 5} << true;
        QTest::newRow("causal, 257 tokens") << AttentionCase{2, 2, 64, 257, true, 0, 0, 0} << true;
        QTest::newRow("GQA 4/2, causal") << AttentionCase{4, 2, 32, 33, true, 0, 0, 0} << true;
        QTest::newRow("GQA 4/1, no capture") << AttentionCase{4, 1, 8, 7, false, 0, 0, 0} << false;
        QTest::newRow("sliding window 5, causal")
            << AttentionCase{2, 2, 16, 33, true, 5, 0, 0} << true;
        QTest::newRow("window 3, bidirectional")
            << AttentionCase{2, 1, 16, 7, false, 3, 0, 0} << true;
        QTest::newRow("left padding, causal: masked rows")
            << AttentionCase{4, 2, 16, 33, true, 0, 3, 0} << true;
        QTest::newRow("every key padded") << AttentionCase{2, 2, 8, 7, false, 0, 7, 0} << true;
        QTest::newRow("T=1") << AttentionCase{4, 2, 16, 1, true, 0, 0, 0} << true;
        QTest::newRow("headDim 128 (2 per invocation)")
            << AttentionCase{2, 2, 128, 7, false, 0, 0, 0} << true;
        QTest::newRow("headDim 80, 65 keys") << AttentionCase{2, 2, 80, 65, false, 0, 0, 2} << true;
    }
    void attentionMatchesCpu() {
        QFETCH(AttentionCase, c);
        QFETCH(bool, capture);
        checkAttention(*pair_, c, capture);
    }

    // Gemma 2's soft-capping: the same on both backends (windowed with padding, and plain), and
    // the CPU's capped scores are c·tanh(s / c) of its uncapped ones wherever a key is visible.
    void softcappedAttentionMatchesCpu() {
        const AttentionCase windowed{4, 2, 16, 33, true, 5, 0, 2},
            plain{2, 2, 64, 9, false, 0, 0, 0};
        checkAttention(*pair_, windowed, true, 2.5f);
        checkAttention(*pair_, plain, true, 2.5f);
        Backend& cpu = pair_->cpu();
        AttentionParams p = paramsFor(windowed);
        const DeviceTensor q = cpu.upload(test::randomTensor({33, 64}, 30, -2.0f, 2.0f));
        const DeviceTensor k = cpu.upload(test::randomTensor({33, 32}, 31, -2.0f, 2.0f));
        DeviceTensor context = cpu.allocate({33, 64}), plainScores = cpu.allocate({4, 33, 33}),
                     cappedScores = cpu.allocate({4, 33, 33});
        cpu.attention(q, k, k, p, context, &plainScores, nullptr);
        p.softcap = 2.5f;
        cpu.attention(q, k, k, p, context, &cappedScores, nullptr);
        const Tensor before = cpu.download(plainScores), after = cpu.download(cappedScores);
        int capped = 0;
        for (std::size_t i = 0; i < before.size(); ++i) {
            const float s = before.values()[i];
            const float want = s == kLowest ? kLowest : 2.5f * std::tanh(s / 2.5f);
            QCOMPARE(after.values()[i], want);
            capped += s != kLowest && std::abs(s) > 2.5f;
        }
        QVERIFY(capped > 0); // some scores were beyond the cap, so capping changed them
    }

    // A query whose keys are all masked attends uniformly to all T keys (Hugging Face semantics).
    void allMaskedRowIsUniform() {
        const AttentionCase c{2, 2, 8, 9, true, 0, 2, 0};
        const AttentionParams p = paramsFor(c);
        const DeviceTensor q = pair_->gpu().upload(test::randomTensor({9, 16}, 33));
        const DeviceTensor v = pair_->gpu().upload(test::randomTensor({9, 16}, 34));
        DeviceTensor context = pair_->gpu().allocate({9, 16}),
                     probs = pair_->gpu().allocate({2, 9, 9});
        pair_->gpu().attention(q, q, v, p, context, nullptr, &probs);
        const Tensor pr = pair_->gpu().download(probs), ctx = pair_->gpu().download(context);
        const Tensor values = pair_->gpu().download(v);
        for (int h = 0; h < 2; ++h)
            for (int i = 0; i < 2; ++i) // queries 0 and 1 see only padded keys
                for (int j = 0; j < 9; ++j)
                    QCOMPARE(pr.values()[std::size_t((h * 9 + i) * 9 + j)], 1.0f / 9.0f);
        float mean = 0.0f;
        for (int j = 0; j < 9; ++j)
            mean += values.values()[std::size_t(j * 16)] / 9.0f;
        QVERIFY(std::abs(ctx.values()[0] - mean) < 1e-6f);
    }

    void chunkedAttentionMatchesCpu() {
        // probs [4, 33, 33]: rows of 132 bytes, 60 per 8 KiB buffer, so chunks cut through heads.
        checkAttention(*chunked_, {4, 2, 8, 33, true, 0, 1, 0}, true);
        auto& gpu = dynamic_cast<vk::VulkanBackend&>(chunked_->gpu());
        QCOMPARE(gpu.maxBindingBytes(), std::size_t(8192));
    }

    void attentionRefusesSplitInputs() {
        const AttentionCase c{4, 4, 16, 100, false, 0, 0, 0}; // q rows of 256 bytes: 4 buffers
        const DeviceTensor q = chunked_->gpu().upload(test::randomTensor({100, 64}, 35));
        DeviceTensor context = chunked_->gpu().allocate({100, 64});
        QVERIFY_THROWS_EXCEPTION(
            vk::VulkanError,
            chunked_->gpu().attention(q, q, q, paramsFor(c), context, nullptr, nullptr));
    }

    void chunkedLinearMatchesCpu() {
        // w [257, 33] spans 5 buffers, out [33, 257] 7; then x [100, 64] 4 and out [100, 48] 3.
        for (const auto& [M, K, N] : {std::array{33, 33, 257}, std::array{100, 64, 48}}) {
            const Both x = chunked_->upload(test::randomTensor({M, K}, 36)),
                       w = chunked_->upload(test::randomTensor({N, K}, 37));
            const Both b = chunked_->upload(test::randomTensor({N}, 38));
            Both out = chunked_->output({M, N});
            chunked_->gpu().linear(x.gpu, w.gpu, &b.gpu, out.gpu);
            chunked_->cpu().linear(x.cpu, w.cpu, &b.cpu, out.cpu);
            QVERIFY(vk::storageOf(out.gpu).chunkCount() > 1);
            QVERIFY(chunked_->matches(out, "chunked linear"));
        }
    }

    void chunkedRowOpsMatchCpu() {
        Both x = chunked_->upload(test::randomTensor({100, 64}, 39, -3.0f, 3.0f));
        QCOMPARE(vk::storageOf(x.gpu).chunkCount(), std::size_t(4));
        const Both same = chunked_->upload(test::randomTensor({100, 64}, 40)),
                   row = chunked_->upload(test::randomTensor({1, 64}, 41));
        const Both gamma = chunked_->upload(test::randomTensor({64}, 42)),
                   beta = chunked_->upload(test::randomTensor({64}, 43));
        Both out = chunked_->output({100, 64});
        for (Backend* backend : {&chunked_->gpu(), &chunked_->cpu()}) {
            const bool gpu = backend == &chunked_->gpu();
            DeviceTensor& o = gpu ? out.gpu : out.cpu;
            const DeviceTensor& in = gpu ? x.gpu : x.cpu;
            backend->add(in, gpu ? same.gpu : same.cpu, o);
            backend->add(o, gpu ? row.gpu : row.cpu, o);
            backend->layerNorm(o, gpu ? gamma.gpu : gamma.cpu, gpu ? beta.gpu : beta.cpu, 1e-5f, o);
            backend->rmsNorm(o, gpu ? gamma.gpu : gamma.cpu, 1e-5f, o);
            backend->gatedActivation(o, in, Activation::Silu, o);
            backend->activation(o, Activation::Gelu, o);
            std::vector<int32_t> positions(100);
            for (int t = 0; t < 100; ++t)
                positions[std::size_t(t)] = 2 * t;
            backend->rope(o, 4, 16, positions, 10000.0);
        }
        QVERIFY(chunked_->matches(out, "chunked add → norms → activations → rope"));
    }

    void chunkedGatherMatchesCpu() {
        const Both table = chunked_->upload(test::randomTensor({257, 33}, 44));
        QVERIFY(vk::storageOf(table.gpu).chunkCount() > 4);
        const std::vector<int32_t> ids{256, 0, 59, 60, 61, 119, 120, 200, 7};
        Both out = chunked_->output({9, 33});
        chunked_->gpu().gatherRows(table.gpu, ids, out.gpu);
        chunked_->cpu().gatherRows(table.cpu, ids, out.cpu);
        QVERIFY(chunked_->matches(out, "chunked gather", {0.0, 0.0}));
    }

    void rowLargerThanABindingIsRefused() {
        QVERIFY_THROWS_EXCEPTION(vk::VulkanError, chunked_->gpu().allocate({2, 3000}));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestVulkanOpsAttention)
#include "test_vulkan_ops_attention.moc"
