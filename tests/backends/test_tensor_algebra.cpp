// Each backend's tensor-algebra ops (backend.h, "tensor algebra for variants") against
// expectations worked out by hand or with plain loops, independent of the implementation. On the
// CPU they are the reference the Vulkan kernels are held to op by op
// (tests/vulkan/test_vulkan_tensor_algebra_parity.cpp), so they must be right on their own.
#include "backend_fixture.h"

#include <QTest>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace headlight;

namespace {

std::vector<float> valuesOf(const Tensor& t) {
    return {t.values().begin(), t.values().end()};
}

bool near(const std::vector<float>& got, const std::vector<float>& want, double tolerance = 1e-6) {
    if (got.size() != want.size()) return false;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (!(std::abs(double(got[i]) - double(want[i])) <=
              tolerance * std::max(1.0, std::abs(double(want[i]))))) {
            qWarning("element %zu: got %.9g, want %.9g", i, double(got[i]), double(want[i]));
            return false;
        }
    return true;
}

Tensor seeded(std::vector<int64_t> shape, uint32_t seed, float lo, float hi) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    Tensor t(std::move(shape));
    for (float& v : t.values())
        v = dist(rng);
    return t;
}
} // namespace

class TestTensorAlgebra : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;
    Backend* backend_ = nullptr; // the fixture's backend, CPU or Vulkan

    DeviceTensor up(std::vector<int64_t> shape, std::vector<float> values) {
        return backend_->upload(Tensor(std::move(shape), std::move(values)));
    }
    std::vector<float> down(const DeviceTensor& t) { return valuesOf(backend_->download(t)); }

public:
    explicit TestTensorAlgebra(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() {
        // The raw ops, NaN and Inf edge cases included (√−1, ln 0): no debug guard
        // (backend/finite_guard.h) even in a Debug build.
        qputenv("HEADLIGHT_FINITE_GUARD", "0");
        fixture_.open();
        backend_ = &fixture_.backend();
    }
    void cleanupTestCase() { fixture_.close(); }

    void binaryRepeatsRowsAndBroadcastsPerRow() {
        const DeviceTensor a = up({2, 3}, {1, 2, 3, 4, 5, 6});
        DeviceTensor out = backend_->allocate({2, 3});
        backend_->binary(a, up({1, 3}, {10, 20, 30}), BinaryOp::Add, out);
        QCOMPARE(down(out), (std::vector<float>{11, 22, 33, 14, 25, 36}));
        backend_->binary(a, up({1, 3}, {1, 2, 3}), BinaryOp::Sub, out);
        QCOMPARE(down(out), (std::vector<float>{0, 0, 0, 3, 3, 3}));
        backend_->binary(a, up({2, 1}, {2, -1}), BinaryOp::Mul, out); // per row
        QCOMPARE(down(out), (std::vector<float>{2, 4, 6, -4, -5, -6}));
        backend_->binary(a, up({2, 1}, {2, 4}), BinaryOp::Div, out);
        QCOMPARE(down(out), (std::vector<float>{0.5f, 1, 1.5f, 1, 1.25f, 1.5f}));
        backend_->binary(a, a, BinaryOp::Mul, out);
        QCOMPARE(down(out), (std::vector<float>{1, 4, 9, 16, 25, 36}));
        // b [2, 3] repeating over a [2, 2, 3]; out aliasing a.
        DeviceTensor c = up({2, 2, 3}, {1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2});
        backend_->binary(c, up({2, 3}, {0, 1, 2, 3, 4, 5}), BinaryOp::Add, c);
        QCOMPARE(down(c), (std::vector<float>{1, 2, 3, 4, 5, 6, 2, 3, 4, 5, 6, 7}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 backend_->binary(a, up({1, 2}, {1, 2}), BinaryOp::Add, out));
    }

    void mapAppliesEachFunctionToTheAffineValue() {
        const DeviceTensor x = up({4}, {0.0f, 0.5f, 1.0f, 2.0f});
        DeviceTensor out = backend_->allocate({4});
        // y = 2x - 1 = {-1, 0, 1, 3}
        const auto mapped = [&](MapOp op) {
            backend_->map(x, op, 2.0f, -1.0f, out);
            return down(out);
        };
        const double e = std::exp(1.0);
        QCOMPARE(mapped(MapOp::Affine), (std::vector<float>{-1, 0, 1, 3}));
        QVERIFY(near(mapped(MapOp::Exp), {float(1 / e), 1, float(e), float(e * e * e)}));
        QVERIFY(near(mapped(MapOp::Elu1), {float(1 / e), 1, 2, 4}));
        QCOMPARE(mapped(MapOp::Relu), (std::vector<float>{0, 0, 1, 3}));
        QVERIFY(near(mapped(MapOp::Sigmoid), {float(1 / (1 + e)), 0.5f, float(e / (1 + e)),
                                              float(1 / (1 + 1 / (e * e * e)))}));
        QVERIFY(near(mapped(MapOp::Cos),
                     {float(std::cos(-1.0)), 1, float(std::cos(1.0)), float(std::cos(3.0))}));
        QVERIFY(near(mapped(MapOp::Sin),
                     {float(std::sin(-1.0)), 0, float(std::sin(1.0)), float(std::sin(3.0))}));
        QCOMPARE(mapped(MapOp::Square), (std::vector<float>{1, 0, 1, 9}));
        const std::vector<float> roots = mapped(MapOp::Sqrt);
        QVERIFY(std::isnan(roots[0]));
        QVERIFY(near({roots[1], roots[2], roots[3]}, {0, 1, float(std::sqrt(3.0))}));
        const std::vector<float> logs = mapped(MapOp::Log);
        QVERIFY(std::isnan(logs[0]) && logs[1] == -std::numeric_limits<float>::infinity());
        QVERIFY(near({logs[2], logs[3]}, {0, float(std::log(3.0))}));
        QVERIFY(near(mapped(MapOp::Tanh),
                     {float(std::tanh(-1.0)), 0, float(std::tanh(1.0)), float(std::tanh(3.0))}));
    }

    // alpha·x + beta is rounded once: 3·(1/3 in f32) - 1 is the tiny residual, not 0.
    void mapRoundsTheAffineValueOnce() {
        const float third = 1.0f / 3.0f;
        DeviceTensor out = backend_->allocate({1});
        backend_->map(up({1}, {third}), MapOp::Affine, 3.0f, -1.0f, out);
        QCOMPARE(down(out)[0], float(3.0 * double(third) - 1.0));
        QVERIFY(down(out)[0] != 0.0f);
    }

    void reduceRowsSumsAndMaxes() {
        const DeviceTensor x = up({2, 2, 3}, {1, 2, 3, -4, -5, -6, 0.5f, 0, 0, 7, -7, 1});
        DeviceTensor out = backend_->allocate({4, 1});
        backend_->reduceRows(x, true, out);
        QCOMPARE(down(out), (std::vector<float>{6, -15, 0.5f, 1}));
        backend_->reduceRows(x, false, out);
        QCOMPARE(down(out), (std::vector<float>{3, -4, 0.5f, 7}));
    }

    void softmaxOfKnownRows() {
        // [0, ln 2] → [1/3, 2/3]; [1000, 1000] → [1/2, 1/2] (max-subtracted: no overflow).
        const DeviceTensor x = up({2, 2}, {0.0f, float(std::log(2.0)), 1000.0f, 1000.0f});
        DeviceTensor out = backend_->allocate({2, 2});
        backend_->softmax(x, nullptr, out);
        QVERIFY(near(down(out), {1.0f / 3, 2.0f / 3, 0.5f, 0.5f}));
    }

    void softmaxMaskRepeatsAndFullyMaskedRowsAreUniform() {
        const DeviceTensor x = up({4, 3}, {1, 2, 3, 1, 2, 3, 5, -9, 0, 0, 0, 0});
        const DeviceTensor mask =
            up({2, 3}, {1, 1, 0, 0, 0, 0}); // rows 0, 2: keep 2 keys; 1, 3: none
        DeviceTensor out = backend_->allocate({4, 3});
        backend_->softmax(x, &mask, out);
        const float e = float(std::exp(1.0));
        const float third = 1.0f / 3;
        const float big = float(std::exp(14.0));
        QVERIFY(near(down(out), {1 / (1 + e), e / (1 + e), 0, third, third, third, big / (big + 1),
                                 1 / (big + 1), 0, third, third, third}));
        const DeviceTensor threeRows =
            up({3, 3}, std::vector<float>(9, 1.0f)); // 3 does not divide 4
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, backend_->softmax(x, &threeRows, out));
    }

    void matmulOfKnownMatrices() {
        const DeviceTensor a = up({2, 3}, {1, 2, 3, 4, 5, 6});
        DeviceTensor out = backend_->allocate({2, 2});
        backend_->matmul(a, up({3, 2}, {7, 8, 9, 10, 11, 12}), false, 1.0f, out);
        QCOMPARE(down(out), (std::vector<float>{58, 64, 139, 154}));
        backend_->matmul(a, up({2, 3}, {7, 9, 11, 8, 10, 12}), true, 0.5f,
                         out); // the same b, transposed
        QCOMPARE(down(out), (std::vector<float>{29, 32, 69.5f, 77}));
    }

    // Batch i of a pairs with batch i / (B / Bb) of b.
    void matmulBroadcastsAndGroupsBatches() {
        const DeviceTensor a = up({4, 1, 2}, {1, 0, 0, 1, 1, 1, 2, 0});
        const DeviceTensor b2 = up({2, 2, 1}, {3, 4, 5, 6}); // batch 0: [3; 4], batch 1: [5; 6]
        DeviceTensor out = backend_->allocate({4, 1, 1});
        backend_->matmul(a, b2, false, 1.0f, out); // a 0, 1 → b 0; a 2, 3 → b 1
        QCOMPARE(down(out), (std::vector<float>{3, 4, 11, 10}));
        backend_->matmul(a, up({1, 2, 1}, {3, 4}), false, 1.0f, out); // Bb = 1
        QCOMPARE(down(out), (std::vector<float>{3, 4, 7, 6}));
        backend_->matmul(a, up({4, 2, 1}, {1, 0, 0, 1, 1, 1, 0, 5}), false, 2.0f, out); // Bb = B
        QCOMPARE(down(out), (std::vector<float>{2, 2, 4, 0}));
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            backend_->matmul(a, up({3, 2, 1}, {1, 2, 3, 4, 5, 6}), false, 1.0f, out));
    }

    void splitAndMergeHeads() {
        // x [T = 2, H·d = 2·2]: token t, head h, dim c holds 100t + 10h + c.
        const DeviceTensor x = up({2, 4}, {0, 1, 10, 11, 100, 101, 110, 111});
        DeviceTensor split = backend_->allocate({2, 2, 2}), merged = backend_->allocate({2, 4});
        backend_->splitHeads(x, 2, split);
        QCOMPARE(down(split), (std::vector<float>{0, 1, 100, 101, 10, 11, 110, 111}));
        backend_->mergeHeads(split, merged);
        QCOMPARE(down(merged), down(x));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, backend_->splitHeads(x, 3, split));
        DeviceTensor wrong = backend_->allocate({4, 2});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, backend_->mergeHeads(split, wrong));
    }

    void copyRowsCopiesARange() {
        const DeviceTensor src = up({3, 2}, {1, 2, 3, 4, 5, 6});
        DeviceTensor dst = up({4, 2}, {0, 0, 0, 0, 0, 0, 0, 0});
        backend_->copyRows(src, 1, 2, dst, 2);
        QCOMPARE(down(dst), (std::vector<float>{0, 0, 0, 0, 3, 4, 5, 6}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, backend_->copyRows(src, 2, 2, dst, 0));
    }

    void scatterAddRowsAccumulatesRepeatedIds() {
        const DeviceTensor src = up({3, 2}, {1, 2, 3, 4, 5, 6});
        DeviceTensor out = up({2, 2}, {10, 10, 20, 20});
        const std::vector<int32_t> ids{1, 0, 1};
        const std::vector<float> weights{2, 1, -1};
        backend_->scatterAddRows(src, ids, weights, out);
        QCOMPARE(down(out), (std::vector<float>{13, 14, 17, 18})); // row 1: 20 + 2·[1, 2] - [5, 6]
        const std::vector<int32_t> bad{0, 2, 1};
        QVERIFY_THROWS_EXCEPTION(std::out_of_range,
                                 backend_->scatterAddRows(src, bad, weights, out));
    }

    // The prefix-sum form equals the masked quadratic form
    //   out_t = Σ_{s≤t} (φq_t · φk_s) v_s / (Σ_{s≤t} φq_t · φk_s + eps),
    // computed here with plain loops over the T × T matrix.
    void causalLinearAttentionEqualsTheQuadraticForm() {
        const int64_t B = 2, T = 5, m = 3, d = 4;
        const float eps = 1e-6f;
        const Tensor q = seeded({B, T, m}, 1, 0.1f, 2.0f), k = seeded({B, T, m}, 2, 0.1f, 2.0f);
        const Tensor v = seeded({B, T, d}, 3, -1.0f, 1.0f);
        DeviceTensor out = backend_->allocate({B, T, d});
        backend_->causalLinearAttention(backend_->upload(q), backend_->upload(k),
                                        backend_->upload(v), eps, out);
        std::vector<float> want;
        const auto at = [](const Tensor& t, int64_t b, int64_t row, int64_t col) {
            return double(t.values()[std::size_t((b * t.dim(1) + row) * t.dim(2) + col)]);
        };
        for (int64_t b = 0; b < B; ++b)
            for (int64_t t = 0; t < T; ++t) {
                std::vector<double> numerator(d, 0.0);
                double denominator = eps;
                for (int64_t s = 0; s <= t; ++s) {
                    double score = 0.0;
                    for (int64_t i = 0; i < m; ++i)
                        score += at(q, b, t, i) * at(k, b, s, i);
                    denominator += score;
                    for (int64_t c = 0; c < d; ++c)
                        numerator[std::size_t(c)] += score * at(v, b, s, c);
                }
                for (const double n : numerator)
                    want.push_back(float(n / denominator));
            }
        QVERIFY(near(down(out), want, 1e-5));
        DeviceTensor wrong = backend_->allocate({B, T + 1, d});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 backend_->causalLinearAttention(backend_->upload(q),
                                                                 backend_->upload(k),
                                                                 backend_->upload(v), eps, wrong));
    }

    // Sparse attention over rows of keys equals the softmax over the same keys computed here with
    // plain loops (ALiBi slopes, grouped kv heads, a per-head pattern, an empty row: uniform over
    // every key), and each entry's weight is that softmax's probability.
    void sparseAttentionEqualsTheMaskedSoftmax() {
        const int64_t H = 4, Hkv = 2, T = 6, d = 3;
        const Tensor q = seeded({H, T, d}, 4, -1.0f, 1.0f), k = seeded({Hkv, T, d}, 5, -1.0f, 1.0f);
        const Tensor v = seeded({Hkv, T, d}, 6, -1.0f, 1.0f);
        SparsePattern pattern;
        pattern.heads = int(H);
        pattern.tokens = T;
        pattern.rowStart.push_back(0);
        for (int64_t h = 0; h < H; ++h)
            for (int64_t i = 0; i < T; ++i) {
                for (int64_t j = 0; j < T; ++j)
                    if (!(h == 1 && i == 2) && (std::abs(i - j) <= h || j == 0))
                        pattern.keys.push_back(int32_t(j));
                pattern.rowStart.push_back(int32_t(pattern.keys.size()));
            }
        const std::vector<float> slopes{0.5f, 0.25f, 0.125f, 0.0625f};
        const float scale = 0.7f;
        DeviceTensor context = backend_->allocate({H, T, d});
        DeviceTensor weights = backend_->allocate({1, pattern.entries()});
        backend_->sparseAttention(backend_->upload(q), backend_->upload(k), backend_->upload(v),
                                  pattern, scale, slopes, context, &weights);
        const auto at = [](const Tensor& t, int64_t b, int64_t row, int64_t col) {
            return double(t.values()[std::size_t((b * t.dim(1) + row) * t.dim(2) + col)]);
        };
        std::vector<float> wantContext, wantWeights;
        for (int64_t h = 0; h < H; ++h)
            for (int64_t i = 0; i < T; ++i) {
                const int32_t first = pattern.rowStart[std::size_t(h * T + i)],
                              end = pattern.rowStart[std::size_t(h * T + i + 1)];
                std::vector<int64_t> keys;
                std::vector<double> scores;
                for (int64_t j = 0; j < T; ++j) {
                    const bool listed =
                        first == end ||
                        std::find(pattern.keys.begin() + first, pattern.keys.begin() + end,
                                  int32_t(j)) != pattern.keys.begin() + end;
                    if (!listed) continue;
                    double dot = 0.0;
                    for (int64_t c = 0; c < d; ++c)
                        dot += at(q, h, i, c) * at(k, h / 2, j, c);
                    keys.push_back(j);
                    scores.push_back(first == end ? 0.0
                                                  : scale * dot - slopes[std::size_t(h)] *
                                                                      double(std::abs(i - j)));
                }
                double total = 0.0;
                for (const double s : scores)
                    total += std::exp(s);
                std::vector<double> out(std::size_t(d), 0.0);
                for (std::size_t e = 0; e < keys.size(); ++e) {
                    const double p = std::exp(scores[e]) / total;
                    if (first != end) wantWeights.push_back(float(p));
                    for (int64_t c = 0; c < d; ++c)
                        out[std::size_t(c)] += p * at(v, h / 2, keys[e], c);
                }
                for (const double o : out)
                    wantContext.push_back(float(o));
            }
        QCOMPARE(pattern.rowStart[std::size_t(T + 3)] - pattern.rowStart[std::size_t(T + 2)], 0);
        QVERIFY(near(down(context), wantContext, 1e-5));
        QVERIFY(near(down(weights), wantWeights, 1e-5));
        pattern.keys.back() = int32_t(T); // a key out of range is refused, not read
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 backend_->sparseAttention(backend_->upload(q), backend_->upload(k),
                                                           backend_->upload(v), pattern, scale,
                                                           slopes, context, &weights));
    }

    void reshapedSharesStorage() {
        DeviceTensor x = up({2, 3}, {1, 2, 3, 4, 5, 6});
        DeviceTensor flat = x.reshaped({3, 2});
        backend_->map(flat, MapOp::Affine, 2.0f, 0.0f, flat);
        QCOMPARE(down(x), (std::vector<float>{2, 4, 6, 8, 10, 12}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, x.reshaped({4, 2}));
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestTensorAlgebra)
#include "test_tensor_algebra.moc"
