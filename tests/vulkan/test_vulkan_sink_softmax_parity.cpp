// Backend::sinkSoftmax (the attention-sink softmax, variants/sink_softmax.h) on lavapipe and on
// the CPU against a double-precision evaluation of e^(s_n) / (e^b + Σ_k e^(s_k)) over the allowed
// keys written here: with and without a repeating mask, in place, rows wider than a workgroup,
// sinks far above and below the scores; a fully masked row is exactly 0, and a sink far below
// every score gives the plain softmax bit for bit.
#include "test_vulkan_ops_support.h"
#include "vulkan_fixture.h"

#include <QTest>
#include <cmath>

using namespace headlight;
using test::Both;

namespace {

// The last row of the mask is all 0 (fully masked) when there are several; the others keep each
// key with probability 0.7.
Tensor sinkMask(int64_t rows, int64_t cols, uint32_t seed) {
    Tensor mask = test::randomTensor({rows, cols}, seed, 0.0f, 1.0f);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
            float& m = mask.values()[std::size_t(r * cols + c)];
            m = (rows > 1 && r == rows - 1) ? 0.0f : float(m > 0.3f);
        }
    return mask;
}

// e^(s_n − M) / (e^(b − M) + Σ_allowed e^(s_k − M)) in double, 0 for a masked key.
Tensor expectedSinkSoftmax(const Tensor& x, const Tensor* mask, float sink) {
    const int64_t cols = x.shape().back(), rows = int64_t(x.size()) / cols;
    const int64_t maskRows = mask ? int64_t(mask->size()) / cols : 0;
    Tensor out(x.shape());
    for (int64_t r = 0; r < rows; ++r) {
        const float* s = x.values().data() + r * cols;
        const float* m = mask ? mask->values().data() + (r % maskRows) * cols : nullptr;
        double top = sink;
        for (int64_t c = 0; c < cols; ++c)
            if (!m || m[c] != 0.0f) top = std::max(top, double(s[c]));
        double total = std::exp(double(sink) - top);
        for (int64_t c = 0; c < cols; ++c)
            if (!m || m[c] != 0.0f) total += std::exp(double(s[c]) - top);
        for (int64_t c = 0; c < cols; ++c)
            out.values()[std::size_t(r * cols + c)] =
                (!m || m[c] != 0.0f) ? float(std::exp(double(s[c]) - top) / total) : 0.0f;
    }
    return out;
}
} // namespace

class TestVulkanSinkSoftmaxParity : public QObject {
    Q_OBJECT
    std::shared_ptr<vk::Context> context_;
    std::unique_ptr<test::BackendPair> pair_;

private Q_SLOTS:
    void initTestCase() {
        context_ = test::makeContext();
        pair_ = std::make_unique<test::BackendPair>(context_, vk::VulkanBackendOptions{0, 1});
        QVERIFY(pair_->gpu().deviceName().find("llvmpipe") != std::string::npos);
    }
    void cleanupTestCase() {
        pair_.reset();
        test::verifyNoValidationErrors(*context_);
    }

    void matchesTheFormula_data() {
        QTest::addColumn<QList<qlonglong>>("shape");
        QTest::addColumn<qlonglong>("maskRows"); // 0: no mask
        QTest::addColumn<float>("sink");
        QTest::newRow("7x33, b = 0") << QList<qlonglong>{7, 33} << 0LL << 0.0f;
        QTest::newRow("1x1, b = 0") << QList<qlonglong>{1, 1} << 0LL << 0.0f;
        QTest::newRow("3x257, mask per row, b = 1.5") << QList<qlonglong>{3, 257} << 3LL << 1.5f;
        QTest::newRow("heads 4x9x9, mask 9x9, b = 0") << QList<qlonglong>{4, 9, 9} << 9LL << 0.0f;
        QTest::newRow("heads 4x9x9, mask 1x9, b = -2") << QList<qlonglong>{4, 9, 9} << 1LL << -2.0f;
        QTest::newRow("12x300, mask 4x300, b = 40 (above every score)")
            << QList<qlonglong>{12, 300} << 4LL << 40.0f;
    }
    void matchesTheFormula() {
        QFETCH(QList<qlonglong>, shape);
        QFETCH(qlonglong, maskRows);
        QFETCH(float, sink);
        const std::vector<int64_t> s(shape.begin(), shape.end());
        const Tensor xHost = test::randomTensor(s, 31, -30.0f, 30.0f);
        const Tensor maskHost = sinkMask(std::max<qlonglong>(maskRows, 1), s.back(), 32);
        const Tensor want = expectedSinkSoftmax(xHost, maskRows ? &maskHost : nullptr, sink);
        const Both x = pair_->upload(xHost), mask = pair_->upload(maskHost);
        Both out = pair_->output(s);
        pair_->gpu().sinkSoftmax(x.gpu, maskRows ? &mask.gpu : nullptr, sink, out.gpu);
        pair_->cpu().sinkSoftmax(x.cpu, maskRows ? &mask.cpu : nullptr, sink, out.cpu);
        QVERIFY(test::closeEnough(pair_->cpu().download(out.cpu), want, "CPU vs formula"));
        QVERIFY(test::closeEnough(pair_->gpu().download(out.gpu), want, "Vulkan vs formula"));
        QVERIFY(pair_->matches(out, "sinkSoftmax"));
        // In place: out aliases x.
        Both inPlace = pair_->upload(xHost);
        pair_->gpu().sinkSoftmax(inPlace.gpu, maskRows ? &mask.gpu : nullptr, sink, inPlace.gpu);
        pair_->cpu().sinkSoftmax(inPlace.cpu, maskRows ? &mask.cpu : nullptr, sink, inPlace.cpu);
        QVERIFY(test::closeEnough(pair_->gpu().download(inPlace.gpu), want, "Vulkan in place"));
        QVERIFY(pair_->matches(inPlace, "sinkSoftmax in place"));
    }

    // Every row keeps e^b / (e^b + Σ e^s) for the sink; a fully masked row gives it everything.
    void rowsSumBelowOneAndAFullyMaskedRowIsZero() {
        const Tensor xHost = test::randomTensor({3, 6}, 33, -3.0f, 3.0f);
        Tensor maskHost({3, 6}, 1.0f);
        for (int c = 0; c < 6; ++c)
            maskHost.values()[std::size_t(2 * 6 + c)] = 0.0f;
        for (Backend* backend : {&pair_->gpu(), &pair_->cpu()}) {
            const DeviceTensor x = backend->upload(xHost), mask = backend->upload(maskHost);
            DeviceTensor out = backend->allocate({3, 6});
            backend->sinkSoftmax(x, &mask, 0.0f, out);
            const Tensor w = backend->download(out);
            for (int r = 0; r < 2; ++r) {
                double sum = 0.0, exps = 1.0; // e^0 for the sink
                for (int c = 0; c < 6; ++c) {
                    sum += w.values()[std::size_t(r * 6 + c)];
                    exps += std::exp(double(xHost.values()[std::size_t(r * 6 + c)]));
                }
                QVERIFY2(std::abs(sum - (1.0 - 1.0 / exps)) < 1e-6, backend->deviceName().c_str());
            }
            for (int c = 0; c < 6; ++c)
                QCOMPARE(w.values()[std::size_t(2 * 6 + c)], 0.0f);
        }
    }

    // e^(b − M) is 0 in f32 for b far below the row's scores, and M is then the row's own max.
    void aSinkFarBelowTheScoresIsThePlainSoftmax() {
        const Tensor xHost = test::randomTensor({5, 40}, 34, -8.0f, 8.0f);
        for (Backend* backend : {&pair_->gpu(), &pair_->cpu()}) {
            const DeviceTensor x = backend->upload(xHost);
            DeviceTensor sunk = backend->allocate({5, 40}), plain = backend->allocate({5, 40});
            backend->sinkSoftmax(x, nullptr, -1000.0f, sunk);
            backend->softmax(x, nullptr, plain);
            const Tensor a = backend->download(sunk), b = backend->download(plain);
            for (std::size_t i = 0; i < a.size(); ++i)
                QCOMPARE(a.values()[i], b.values()[i]);
        }
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestVulkanSinkSoftmaxParity)
#include "test_vulkan_sink_softmax_parity.moc"
