// Op-by-op parity of the Vulkan backend with the CPU backend on lavapipe: linear, add, gather,
// norms, activations (with GELU's erf checked against double precision), gated activations and
// RoPE, on seeded random inputs with odd shapes (1, 7, 33, 257 and T = 1). Tolerances and the
// guard and NaN checks are described in test_vulkan_ops_support.h. Attention and tensors split
// over several storage buffers are in test_vulkan_ops_attention.cpp.
#include "backend/vulkan/vk_error.h"
#include "test_vulkan_ops_support.h"
#include "vulkan_fixture.h"

#include <QTest>
#include <cmath>

using namespace headlight;
using test::Both;

namespace {
constexpr Activation kActivations[] = {Activation::Gelu, Activation::GeluTanh, Activation::Relu,
                                       Activation::Silu};
const char* activationName(Activation a) {
    switch (a) {
    case Activation::Gelu:
        return "gelu";
    case Activation::GeluTanh:
        return "gelu_tanh";
    case Activation::Relu:
        return "relu";
    case Activation::Silu:
        return "silu";
    }
    return "?";
}

double exactGelu(double x) {
    return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
}
} // namespace

class TestVulkanOps : public QObject {
    Q_OBJECT
    std::shared_ptr<vk::Context> context_;
    std::unique_ptr<test::BackendPair> pair_;

    Both upload(const Tensor& t) { return pair_->upload(t); }

private Q_SLOTS:
    void initTestCase() {
        context_ = test::makeContext();
        pair_ = std::make_unique<test::BackendPair>(context_, vk::VulkanBackendOptions{0, 1});
        QCOMPARE(pair_->gpu().kind(), BackendKind::Vulkan);
        QVERIFY(pair_->gpu().deviceName().find("llvmpipe") != std::string::npos);
    }
    void cleanupTestCase() {
        pair_.reset();
        test::verifyNoValidationErrors(*context_);
    }

    void linearMatchesCpu_data() {
        QTest::addColumn<int>("M");
        QTest::addColumn<int>("K");
        QTest::addColumn<int>("N");
        QTest::addColumn<bool>("bias");
        QTest::newRow("T=1, K%4=0") << 1 << 64 << 33 << true;
        QTest::newRow("T=1, K=7") << 1 << 7 << 257 << false;
        QTest::newRow("7x33x257") << 7 << 33 << 257 << true;
        QTest::newRow("33x257x7") << 33 << 257 << 7 << true;
        QTest::newRow("257x36x33") << 257 << 36 << 33 << false;
        QTest::newRow("33x1x1") << 33 << 1 << 1 << true;
        QTest::newRow("3x768x96") << 3 << 768 << 96 << true;
    }
    void linearMatchesCpu() {
        QFETCH(int, M);
        QFETCH(int, K);
        QFETCH(int, N);
        QFETCH(bool, bias);
        const Both x = upload(test::randomTensor({M, K}, 1)),
                   w = upload(test::randomTensor({N, K}, 2));
        const Both b = upload(test::randomTensor({N}, 3));
        Both out = pair_->output({M, N});
        pair_->gpu().linear(x.gpu, w.gpu, bias ? &b.gpu : nullptr, out.gpu);
        pair_->cpu().linear(x.cpu, w.cpu, bias ? &b.cpu : nullptr, out.cpu);
        QVERIFY(pair_->matches(out, "linear"));
    }

    void addBroadcastsRows() {
        const Both a = upload(test::randomTensor({21, 33}, 4));
        for (const int rows : {21, 7, 1}) {
            const Both b = upload(test::randomTensor({rows, 33}, 5 + rows));
            Both out = pair_->output({21, 33});
            pair_->gpu().add(a.gpu, b.gpu, out.gpu);
            pair_->cpu().add(a.cpu, b.cpu, out.cpu);
            QVERIFY(pair_->matches(out, "add, b rows " + std::to_string(rows)));
        }
    }

    void addInPlace() {
        Both a = upload(test::randomTensor({257, 7}, 6));
        const Both b = upload(test::randomTensor({257, 7}, 7));
        pair_->gpu().add(a.gpu, b.gpu, a.gpu);
        pair_->cpu().add(a.cpu, b.cpu, a.cpu);
        QVERIFY(pair_->matches(a, "add in place"));
    }

    void gatherRowsPicksRows() {
        const Both table = upload(test::randomTensor({257, 33}, 8));
        for (const std::vector<int32_t>& ids :
             {std::vector<int32_t>{0, 256, 7, 7, 100, 1, 33}, {256}}) {
            Both out = pair_->output({int64_t(ids.size()), 33});
            pair_->gpu().gatherRows(table.gpu, ids, out.gpu);
            pair_->cpu().gatherRows(table.cpu, ids, out.cpu);
            QVERIFY(pair_->matches(out, "gatherRows", {0.0, 0.0})); // a copy: exact
        }
        Both out = pair_->output({1, 33});
        QVERIFY_THROWS_EXCEPTION(
            std::out_of_range,
            pair_->gpu().gatherRows(table.gpu, std::vector<int32_t>{257}, out.gpu));
    }

    void normsMatchCpu_data() {
        QTest::addColumn<int>("T");
        QTest::addColumn<int>("D");
        QTest::addColumn<float>("offset");
        QTest::addColumn<double>("nmse");
        QTest::newRow("1x7") << 1 << 7 << 0.0f << 1e-11;
        QTest::newRow("7x33") << 7 << 33 << 0.0f << 1e-11;
        QTest::newRow("33x257") << 33 << 257 << 0.0f << 1e-11;
        // Values near 100 carry f32 steps of 7.6e-6, 7e-6 of the row's spread, so two f32 means
        // of 768 of them (different summation orders) differ at that level: NMSE ~1e-10. The
        // case guards against one-pass variance, which would be off by whole percents.
        QTest::newRow("3x768, mean 100") << 3 << 768 << 100.0f << 1e-9;
        QTest::newRow("2x1") << 2 << 1 << 0.0f << 1e-11;
    }
    void normsMatchCpu() {
        QFETCH(int, T);
        QFETCH(int, D);
        QFETCH(float, offset);
        QFETCH(double, nmse);
        const Both x = upload(test::randomTensor({T, D}, 9, offset - 2.0f, offset + 2.0f));
        const Both gamma = upload(test::randomTensor({D}, 10, 0.5f, 1.5f)),
                   beta = upload(test::randomTensor({D}, 11));
        Both ln = pair_->output({T, D}), rms = pair_->output({T, D});
        pair_->gpu().layerNorm(x.gpu, gamma.gpu, beta.gpu, 1e-5f, ln.gpu);
        pair_->cpu().layerNorm(x.cpu, gamma.cpu, beta.cpu, 1e-5f, ln.cpu);
        pair_->gpu().rmsNorm(x.gpu, gamma.gpu, 1e-6f, rms.gpu);
        pair_->cpu().rmsNorm(x.cpu, gamma.cpu, 1e-6f, rms.cpu);
        // D = 1: LayerNorm's output is exactly beta, i.e. the reference's scale can be tiny.
        QVERIFY(pair_->matches(ln, "layerNorm", {nmse, 2e-5}));
        QVERIFY(pair_->matches(rms, "rmsNorm"));
    }

    void normsInPlace() {
        Both x = upload(test::randomTensor({7, 257}, 12));
        const Both gamma = upload(test::randomTensor({257}, 13)),
                   beta = upload(test::randomTensor({257}, 14));
        pair_->gpu().layerNorm(x.gpu, gamma.gpu, beta.gpu, 1e-5f, x.gpu);
        pair_->cpu().layerNorm(x.cpu, gamma.cpu, beta.cpu, 1e-5f, x.cpu);
        pair_->gpu().rmsNorm(x.gpu, gamma.gpu, 1e-5f, x.gpu);
        pair_->cpu().rmsNorm(x.cpu, gamma.cpu, 1e-5f, x.cpu);
        QVERIFY(pair_->matches(x, "norms in place"));
    }

    void activationsMatchCpu() {
        // Wide range: exp overflow, erf tails and the GELU branches are all exercised.
        Tensor host = test::randomTensor({33, 257}, 15, -12.0f, 12.0f);
        const float specials[] = {0.0f,    -0.0f,  1e-30f, -1e-30f,    100.0f,
                                  -100.0f, -88.0f, -89.0f, 1.4142135f, -4.2426f};
        std::copy(std::begin(specials), std::end(specials), host.values().begin());
        const Both x = upload(host);
        for (const Activation kind : kActivations) {
            Both out = pair_->output({33, 257});
            pair_->gpu().activation(x.gpu, kind, out.gpu);
            pair_->cpu().activation(x.cpu, kind, out.cpu);
            QVERIFY(pair_->matches(out, activationName(kind)));
        }
        Both inPlace = upload(host);
        pair_->gpu().activation(inPlace.gpu, Activation::Silu, inPlace.gpu);
        pair_->cpu().activation(inPlace.cpu, Activation::Silu, inPlace.cpu);
        QVERIFY(pair_->matches(inPlace, "silu in place"));
    }

    // GELU's erf against double precision on a dense grid: the shader's erf fits err by ≤ 1.1e-8
    // relative; in f32 the result must stay within 4e-7 relative (about 3 ulp).
    void geluErfIsAccurate() {
        std::vector<float> xs;
        for (int i = -130000; i <= 130000; ++i)
            xs.push_back(float(i) * 1e-4f);
        for (float x = 1e-8f; x < 1e-3f; x *= 1.5f)
            xs.insert(xs.end(), {x, -x});
        const auto n = int64_t(xs.size());
        const DeviceTensor x = pair_->gpu().upload(Tensor({n}, xs));
        DeviceTensor out = pair_->gpu().allocate({n});
        pair_->gpu().activation(x, Activation::Gelu, out);
        const Tensor got = pair_->gpu().download(out);
        QString where;
        const double worst = test::worstError(
            xs.size(),
            [&](std::size_t i) {
                const double want = exactGelu(xs[i]);
                // Below x ≈ -12.9 erfc itself nears f32's smallest normal (1.2e-38) and loses bits.
                if (std::abs(want) < 1e-35) return 0.0;
                return std::abs(got.values()[i] - want) / std::abs(want);
            },
            &where);
        qInfo("GELU (erf) max relative error vs double: %.3g (%s)", worst, qPrintable(where));
        QVERIFY2(worst < 4e-7, qPrintable(where));
    }

    void gatedActivationsMatchCpu() {
        const Both gate = upload(test::randomTensor({7, 257}, 16, -6.0f, 6.0f));
        const Both up = upload(test::randomTensor({7, 257}, 17));
        for (const Activation kind : kActivations) {
            Both out = pair_->output({7, 257});
            pair_->gpu().gatedActivation(gate.gpu, up.gpu, kind, out.gpu);
            pair_->cpu().gatedActivation(gate.cpu, up.cpu, kind, out.cpu);
            QVERIFY(pair_->matches(out, std::string("gated ") + activationName(kind)));
        }
        Both g = upload(test::randomTensor({1, 33}, 18));
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            pair_->gpu().gatedActivation(g.gpu, up.gpu, Activation::Silu, g.gpu));
    }

    void ropeMatchesCpu_data() {
        QTest::addColumn<int>("T");
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("headDim");
        QTest::addColumn<int>("firstPosition");
        QTest::addColumn<int>("rotaryDim");
        QTest::addColumn<bool>("interleaved");
        QTest::newRow("T=1") << 1 << 4 << 16 << 0 << 16 << false;
        QTest::newRow("7 tokens, 2 heads of 64") << 7 << 2 << 64 << 3 << 64 << false;
        QTest::newRow("33 tokens at 4000") << 33 << 3 << 8 << 4000 << 8 << false;
        // GPT-NeoX (rotary_pct 0.25 of 64) and GPT-J (rotary_dim 64 of 256, and all of 8).
        QTest::newRow("partial rotate-half") << 9 << 3 << 64 << 5 << 16 << false;
        QTest::newRow("partial interleaved") << 5 << 2 << 256 << 40 << 64 << true;
        QTest::newRow("full interleaved") << 12 << 4 << 8 << 0 << 8 << true;
    }
    // Checks the Vulkan kernel against the CPU backend, and the CPU backend on one feature pair
    // against the rotation written out: the pair's partner and a feature past rotaryDim.
    void ropeMatchesCpu() {
        QFETCH(int, T);
        QFETCH(int, heads);
        QFETCH(int, headDim);
        QFETCH(int, firstPosition);
        QFETCH(int, rotaryDim);
        QFETCH(bool, interleaved);
        std::vector<int32_t> positions;
        for (int t = 0; t < T; ++t)
            positions.push_back(firstPosition + t * 3);
        const Tensor input = test::randomTensor({T, heads * headDim}, 19);
        Both x = upload(input);
        const RotaryParams rope{heads, headDim, rotaryDim, interleaved, 10000.0};
        pair_->gpu().rope(x.gpu, rope, positions);
        pair_->cpu().rope(x.cpu, rope, positions);
        QVERIFY(pair_->matches(x, "rope"));
        // Pair 1 of the last head of the last row: angle = position · 10000^(-2/rotaryDim). Why
        // 1e-3: the backends hold the angle in f32, as Hugging Face does (hundreds of radians).
        const Tensor once = pair_->cpu().download(x.cpu);
        const int64_t row = (T - 1) * heads * headDim + (heads - 1) * headDim;
        const int64_t a = row + (interleaved ? 2 : 1), b = a + (interleaved ? 1 : rotaryDim / 2);
        const double angle = positions.back() * std::pow(10000.0, -2.0 / rotaryDim);
        const double x1 = input.values()[std::size_t(a)], x2 = input.values()[std::size_t(b)];
        QVERIFY(std::abs(once.values()[std::size_t(a)] -
                         (x1 * std::cos(angle) - x2 * std::sin(angle))) < 1e-3);
        QVERIFY(std::abs(once.values()[std::size_t(b)] -
                         (x2 * std::cos(angle) + x1 * std::sin(angle))) < 1e-3);
        if (rotaryDim < headDim)
            QCOMPARE(once.values()[std::size_t(row + headDim - 1)],
                     input.values()[std::size_t(row + headDim - 1)]);
        pair_->gpu().rope(x.gpu, rope, positions); // the cached table
        pair_->cpu().rope(x.cpu, rope, positions);
        QVERIFY(pair_->matches(x, "rope twice"));
    }

    // A chain of ops recorded into one command buffer, with temporaries released before it runs.
    void chainedOpsRunInOneBatch() {
        const Both x = upload(test::randomTensor({7, 33}, 20)),
                   w = upload(test::randomTensor({64, 33}, 21));
        const Both gamma = upload(test::randomTensor({64}, 22)),
                   beta = upload(test::randomTensor({64}, 23));
        Both out = pair_->output({7, 64});
        for (Backend* backend : {&pair_->gpu(), &pair_->cpu()}) {
            const bool gpu = backend == &pair_->gpu();
            auto hidden = std::make_unique<DeviceTensor>(backend->allocate({7, 64}));
            backend->linear(gpu ? x.gpu : x.cpu, gpu ? w.gpu : w.cpu, nullptr, *hidden);
            backend->activation(*hidden, Activation::Gelu, *hidden);
            backend->layerNorm(*hidden, gpu ? gamma.gpu : gamma.cpu, gpu ? beta.gpu : beta.cpu,
                               1e-5f, gpu ? out.gpu : out.cpu);
            hidden.reset(); // the device must still read it when the batch runs
        }
        QVERIFY(pair_->matches(out, "linear → gelu → layerNorm"));
    }

    void misuseIsRefused() {
        const Both x = upload(test::randomTensor({3, 5}, 24)),
                   w = upload(test::randomTensor({4, 6}, 25));
        Both out = pair_->output({3, 4});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 pair_->gpu().linear(x.gpu, w.gpu, nullptr, out.gpu));
        QVERIFY_THROWS_EXCEPTION(std::logic_error,
                                 pair_->gpu().activation(x.cpu, Activation::Relu, out.gpu));
        Both wrong = pair_->output({5, 3, 1});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 pair_->gpu().activation(x.gpu, Activation::Relu, wrong.gpu));
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            pair_->gpu().rope(out.gpu, 1, 3, std::vector<int32_t>{0, 1, 2}, 1e4));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 pair_->gpu().rope(out.gpu, RotaryParams{1, 4, 6, false, 1e4},
                                                   std::vector<int32_t>{0, 1, 2}));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestVulkanOps)
#include "test_vulkan_ops.moc"
