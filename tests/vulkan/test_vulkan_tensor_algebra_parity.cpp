// Parity of the Vulkan backend's tensor-algebra ops (backend.h, "tensor algebra for variants")
// with the CPU backend on lavapipe: every BinaryOp in every broadcast form, every MapOp (and the
// shader transcendentals against double precision), both reductions, softmax with and without a
// repeating mask (fully masked rows included), batched matmul (transposed or not, Bb = 1, Bb = B
// and grouped, odd sizes, alpha), heads split and merge, row copies, scatter-add with repeated
// ids, causal linear attention and sparse attention over rows of keys. Inputs include reshaped
// views, and a second backend with an 8 KiB storage-binding limit splits tensors over several
// buffers. Tolerances and the NaN and guard-row checks: test_vulkan_ops_support.h.
#include "backend/vulkan/vk_error.h"
#include "test_vulkan_ops_support.h"
#include "vulkan_fixture.h"

#include <QTest>
#include <cmath>
#include <functional>
#include <numeric>

using namespace headlight;
using test::Both;

Q_DECLARE_METATYPE(BinaryOp)
Q_DECLARE_METATYPE(MapOp)

namespace {
constexpr BinaryOp kBinaryOps[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div};
constexpr std::size_t kChunkedBindingBytes = 8192;

const char* binaryName(BinaryOp op) {
    switch (op) {
    case BinaryOp::Add:
        return "add";
    case BinaryOp::Sub:
        return "sub";
    case BinaryOp::Mul:
        return "mul";
    case BinaryOp::Div:
        return "div";
    }
    return "?";
}

// A tensor as one backend sees it; outputs are handles too (DeviceTensor shares its storage).
using Pick = std::function<DeviceTensor(const Both&)>;

// Runs `op` on the device with the device tensors, then on the reference with its own.
template <typename Op> void onBoth(test::BackendPair& pair, Op op) {
    op(pair.gpu(), Pick([](const Both& t) { return t.gpu; }));
    op(pair.cpu(), Pick([](const Both& t) { return t.cpu; }));
}

// Positive features, as φ = elu + 1 makes them.
Tensor features(std::vector<int64_t> shape, uint32_t seed) {
    return test::randomTensor(std::move(shape), seed, 0.05f, 2.0f);
}

// Rows of keys drawn with probability 0.3 each, the diagonal always in, row 1 of the last head
// pattern empty (attends every key uniformly).
SparsePattern randomPattern(int heads, int64_t tokens, uint32_t seed) {
    const Tensor draw = test::randomTensor({heads, tokens, tokens}, seed, 0.0f, 1.0f);
    SparsePattern pattern;
    pattern.heads = heads;
    pattern.tokens = tokens;
    pattern.rowStart.push_back(0);
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < tokens; ++i) {
            for (int64_t j = 0; j < tokens && !(h == heads - 1 && i == 1); ++j)
                if (j == i || draw.values()[std::size_t((h * tokens + i) * tokens + j)] < 0.3f)
                    pattern.keys.push_back(int32_t(j));
            pattern.rowStart.push_back(int32_t(pattern.keys.size()));
        }
    return pattern;
}

Tensor maskWithEmptyRow(int64_t rows, int64_t cols, int64_t emptyRow, uint32_t seed) {
    Tensor mask = test::randomTensor({rows, cols}, seed, 0.0f, 1.0f);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
            float& m = mask.values()[std::size_t(r * cols + c)];
            m = r == emptyRow ? 0.0f : float(m > 0.3f);
        }
    return mask;
}

struct MatmulCase {
    int64_t B, Bb, M, K, N;
    bool transposeB;
    float alpha;
};
} // namespace
Q_DECLARE_METATYPE(MatmulCase)

class TestVulkanTensorAlgebraParity : public QObject {
    Q_OBJECT
    std::shared_ptr<vk::Context> context_;
    std::unique_ptr<test::BackendPair> pair_, chunked_;

    Both upload(const Tensor& t) { return pair_->upload(t); }

    // Whether every operand of a chunked test is really split over several buffers.
    static bool split(const Both& t) { return !vk::storageOf(t.gpu).singleChunk(); }

    void checkMatmul(test::BackendPair& pair, const MatmulCase& c, const std::string& what) {
        const Both a = pair.upload(test::randomTensor({c.B, c.M, c.K}, 40));
        const std::vector<int64_t> bShape = c.transposeB ? std::vector<int64_t>{c.Bb, c.N, c.K}
                                                         : std::vector<int64_t>{c.Bb, c.K, c.N};
        const Both b = pair.upload(test::randomTensor(bShape, 41));
        Both out = pair.output({c.B, c.M, c.N});
        onBoth(pair, [&](Backend& be, const Pick& t) {
            DeviceTensor o = t(out);
            be.matmul(t(a), t(b), c.transposeB, c.alpha, o);
        });
        QVERIFY(pair.matches(out, what));
    }

private Q_SLOTS:
    void initTestCase() {
        context_ = test::makeContext();
        pair_ = std::make_unique<test::BackendPair>(context_, vk::VulkanBackendOptions{0, 1});
        chunked_ = std::make_unique<test::BackendPair>(
            context_, vk::VulkanBackendOptions{kChunkedBindingBytes, 1});
        QVERIFY(pair_->gpu().deviceName().find("llvmpipe") != std::string::npos);
    }
    void cleanupTestCase() {
        pair_.reset();
        chunked_.reset();
        test::verifyNoValidationErrors(*context_);
    }

    // [SECTION] binary
    void binaryMatchesCpu_data() {
        QTest::addColumn<BinaryOp>("op");
        QTest::addColumn<QList<qlonglong>>("aShape");
        QTest::addColumn<QList<qlonglong>>("bShape");
        for (const BinaryOp op : kBinaryOps) {
            const std::string name = binaryName(op);
            QTest::newRow((name + ", same shape").c_str())
                << op << QList<qlonglong>{21, 33} << QList<qlonglong>{21, 33};
            QTest::newRow((name + ", rows repeat").c_str())
                << op << QList<qlonglong>{21, 33} << QList<qlonglong>{7, 33};
            QTest::newRow((name + ", one row").c_str())
                << op << QList<qlonglong>{3, 7, 33} << QList<qlonglong>{1, 33};
            QTest::newRow((name + ", 3-D b repeats").c_str())
                << op << QList<qlonglong>{4, 5, 3} << QList<qlonglong>{2, 5, 3};
            QTest::newRow((name + ", per row").c_str())
                << op << QList<qlonglong>{21, 33} << QList<qlonglong>{21, 1};
            QTest::newRow((name + ", per row of a 3-D a").c_str())
                << op << QList<qlonglong>{3, 7, 257} << QList<qlonglong>{21, 1};
        }
    }
    void binaryMatchesCpu() {
        QFETCH(BinaryOp, op);
        QFETCH(QList<qlonglong>, aShape);
        QFETCH(QList<qlonglong>, bShape);
        const std::vector<int64_t> as(aShape.begin(), aShape.end()),
            bs(bShape.begin(), bShape.end());
        const Both a = upload(test::randomTensor(as, 1, -3.0f, 3.0f));
        const Both b = upload(test::randomTensor(bs, 2, 0.5f, 2.0f)); // away from 0 for Div
        Both out = pair_->output(as);
        onBoth(*pair_, [&](Backend& be, const Pick& t) {
            DeviceTensor o = t(out);
            be.binary(t(a), t(b), op, o);
        });
        QVERIFY(pair_->matches(out, binaryName(op)));
        Both inPlace = upload(test::randomTensor(as, 3));
        onBoth(*pair_, [&](Backend& be, const Pick& t) {
            DeviceTensor x = t(inPlace);
            be.binary(x, t(b), op, x);
        });
        QVERIFY(pair_->matches(inPlace, std::string(binaryName(op)) + " in place"));
    }

    void binaryOnReshapedAndSplitTensors() {
        for (const BinaryOp op : kBinaryOps) {
            test::BackendPair& pair = *chunked_;
            const Both a = pair.upload(test::randomTensor({40, 100}, 4));
            const Both same = pair.upload(test::randomTensor({40, 100}, 5, 0.5f, 2.0f));
            const Both rows = pair.upload(test::randomTensor({4, 100}, 6, 0.5f, 2.0f));
            const Both perRow = pair.upload(test::randomTensor({40, 1}, 7, 0.5f, 2.0f));
            QVERIFY(split(a) && split(same));
            // A [40, 100] split by rows of 100, seen as [100, 40]: the rows of b repeat along
            // the view's rows, not the storage's.
            const Both viewRows = pair.upload(test::randomTensor({5, 40}, 8, 0.5f, 2.0f));
            const Both perViewRow = pair.upload(test::randomTensor({100, 1}, 9, 0.5f, 2.0f));
            const std::pair<const Both*, std::vector<int64_t>> cases[] = {{&same, {40, 100}},
                                                                          {&rows, {40, 100}},
                                                                          {&perRow, {40, 100}},
                                                                          {&viewRows, {100, 40}},
                                                                          {&perViewRow, {100, 40}}};
            // Why not a structured binding: clang 14 (the asan preset) cannot capture one.
            for (const auto& entry : cases) {
                const Both* b = entry.first;
                const std::vector<int64_t>& view = entry.second;
                Both out = pair.output({40, 100});
                onBoth(pair, [&](Backend& be, const Pick& t) {
                    DeviceTensor o = t(out).reshaped(view);
                    be.binary(t(a).reshaped(view), t(*b), op, o);
                });
                QVERIFY(pair.matches(out, std::string(binaryName(op)) + ", split, b " +
                                              shapeString(b->gpu.shape())));
            }
        }
        // b repeating with a period of several buffers cannot be indexed from one binding.
        const Both a = chunked_->upload(test::randomTensor({40, 100}, 10));
        const Both b = chunked_->upload(test::randomTensor({20, 100}, 11));
        Both out = chunked_->output({40, 100});
        QVERIFY(split(b));
        QVERIFY_THROWS_EXCEPTION(vk::VulkanError,
                                 chunked_->gpu().binary(a.gpu, b.gpu, BinaryOp::Add, out.gpu));
    }

    void binaryMisuseIsRefused() {
        const Both a = upload(test::randomTensor({6, 4}, 12)),
                   b = upload(test::randomTensor({4, 4}, 13));
        Both out = pair_->output({6, 4});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 pair_->gpu().binary(a.gpu, b.gpu, BinaryOp::Mul, out.gpu));
        Both small = pair_->output({5, 4});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 pair_->gpu().binary(a.gpu, a.gpu, BinaryOp::Mul, small.gpu));
    }

    // [SECTION] map
    void mapMatchesCpu_data() {
        QTest::addColumn<MapOp>("op");
        QTest::addColumn<float>("lo");
        QTest::addColumn<float>("hi");
        QTest::newRow("affine") << MapOp::Affine << -10.0f << 10.0f;
        QTest::newRow("exp") << MapOp::Exp << -60.0f << 60.0f;
        QTest::newRow("elu1") << MapOp::Elu1 << -30.0f << 10.0f;
        QTest::newRow("relu") << MapOp::Relu << -5.0f << 5.0f;
        QTest::newRow("sigmoid") << MapOp::Sigmoid << -40.0f << 40.0f;
        QTest::newRow("cos") << MapOp::Cos << -3000.0f << 3000.0f;
        QTest::newRow("sin") << MapOp::Sin << -3000.0f << 3000.0f;
        QTest::newRow("square") << MapOp::Square << -100.0f << 100.0f;
        QTest::newRow("sqrt") << MapOp::Sqrt << 0.0f << 1000.0f;
        QTest::newRow("log") << MapOp::Log << 0.0f << 1000.0f;
        QTest::newRow("tanh") << MapOp::Tanh << -12.0f << 12.0f;
    }
    void mapMatchesCpu() {
        QFETCH(MapOp, op);
        QFETCH(float, lo);
        QFETCH(float, hi);
        // y = 1.5 x - 0.25 over x in the range that puts y in [lo, hi], where the function is
        // interesting and finite: the comparison fails on any NaN or infinity, and the results
        // that are not finite (exp(100), log(0), sqrt(-1)) are mapEdgesMatchCpu's, exactly.
        const float alpha = 1.5f, beta = -0.25f;
        Tensor host = test::randomTensor({33, 257}, 14, (lo - beta) / alpha, (hi - beta) / alpha);
        const float specials[] = {0.0f, 1e-30f, 1e-6f, 1.0f, 0.5f, 100.0f, 1e-38f};
        // Below 1e-6 the affine map's f32 rounding (and fma or not) lands the tiny values on 0 or
        // 7e-9, where log is -inf or finite by chance.
        std::size_t placed = 0;
        for (const float y : specials)
            if (y >= lo && y <= hi && !(op == MapOp::Log && y < 1e-6f))
                host.values()[placed++] = (y - beta) / alpha;
        const Both x = upload(host);
        Both out = pair_->output({33, 257});
        onBoth(*pair_, [&](Backend& be, const Pick& t) {
            DeviceTensor o = t(out);
            be.map(t(x), op, alpha, beta, o);
        });
        QVERIFY(pair_->matches(out, "map"));
        Both inPlace = upload(host);
        onBoth(*pair_, [&](Backend& be, const Pick& t) {
            DeviceTensor v = t(inPlace);
            be.map(v, op, alpha, beta, v);
        });
        QVERIFY(pair_->matches(inPlace, "map in place"));
    }

    // Values outside the functions' domains or ranges agree too: NaN, ±inf, 0 and saturation.
    void mapEdgesMatchCpu() {
        const std::vector<float> edges{0.0f,   -0.0f,  -1.0f,   -1e30f, 1e30f,   -200.0f,
                                       200.0f, -87.5f, -103.5f, 88.8f,  -3.4e38f};
        const auto n = int64_t(edges.size());
        for (int op = 0; op <= int(MapOp::Tanh); ++op) {
            const DeviceTensor x = pair_->gpu().upload(Tensor({n}, edges));
            DeviceTensor out = pair_->gpu().allocate({n});
            pair_->gpu().map(x, MapOp(op), 1.0f, 0.0f, out);
            const Tensor got = pair_->gpu().download(out);
            const DeviceTensor cx = pair_->cpu().upload(Tensor({n}, edges));
            DeviceTensor cout = pair_->cpu().allocate({n});
            pair_->cpu().map(cx, MapOp(op), 1.0f, 0.0f, cout);
            const Tensor want = pair_->cpu().download(cout);
            for (std::size_t i = 0; i < edges.size(); ++i) {
                // sin and cos reduce arguments in f32 with π/2 in three parts: exact up to
                // |x| ≈ 12868 (docs/vulkan-backend.md), not at 1e30.
                const bool periodic = MapOp(op) == MapOp::Sin || MapOp(op) == MapOp::Cos;
                if (periodic && std::abs(edges[i]) > 1e4f) continue;
                const float g = got.values()[i], w = want.values()[i];
                const bool same = (std::isnan(g) && std::isnan(w)) || g == w ||
                                  std::abs(g - w) <= 1e-6f * std::max(1.0f, std::abs(w));
                QVERIFY2(same, qPrintable(QString("map op %1 at %2: got %3, want %4")
                                              .arg(op)
                                              .arg(edges[i])
                                              .arg(g)
                                              .arg(w)));
            }
        }
    }

    // The shader transcendentals against double precision on dense grids: about 2 f32 ulp
    // (measured on lavapipe: about half of each bound).
    void mapTranscendentalsAreAccurate_data() {
        QTest::addColumn<MapOp>("op");
        QTest::addColumn<float>("lo");
        QTest::addColumn<float>("hi");
        QTest::addColumn<double>("relative");
        QTest::addColumn<double>("absolute");
        QTest::newRow("exp") << MapOp::Exp << -87.0f << 88.0f << 2.5e-7 << 0.0;
        QTest::newRow("sigmoid") << MapOp::Sigmoid << -80.0f << 80.0f << 2.5e-7 << 0.0;
        QTest::newRow("elu1") << MapOp::Elu1 << -80.0f << 1.0f << 2.5e-7 << 0.0;
        QTest::newRow("log") << MapOp::Log << 1e-30f << 1e30f << 1.5e-7 << 6e-8;
        QTest::newRow("tanh") << MapOp::Tanh << -10.0f << 10.0f << 2.5e-7 << 0.0;
        QTest::newRow("sin") << MapOp::Sin << -10000.0f << 10000.0f << 0.0 << 1.5e-7;
        QTest::newRow("cos") << MapOp::Cos << -10000.0f << 10000.0f << 0.0 << 1.5e-7;
    }
    void mapTranscendentalsAreAccurate() {
        QFETCH(MapOp, op);
        QFETCH(float, lo);
        QFETCH(float, hi);
        QFETCH(double, relative);
        QFETCH(double, absolute);
        const bool logarithmic = op == MapOp::Log;
        std::vector<float> xs;
        for (int i = 0; i <= 200000; ++i) {
            const double u = double(i) / 200000.0;
            xs.push_back(logarithmic
                             ? float(std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo))))
                             : float(lo + u * (hi - lo)));
        }
        const auto n = int64_t(xs.size());
        DeviceTensor out = pair_->gpu().allocate({n});
        pair_->gpu().map(pair_->gpu().upload(Tensor({n}, xs)), op, 1.0f, 0.0f, out);
        const Tensor got = pair_->gpu().download(out);
        QString where;
        const double worst = test::worstError(
            xs.size(),
            [&](std::size_t i) {
                const double x = xs[i];
                const double want = op == MapOp::Exp       ? std::exp(x)
                                    : op == MapOp::Sigmoid ? 1.0 / (1.0 + std::exp(-x))
                                    : op == MapOp::Elu1    ? (x > 0 ? x + 1.0 : std::exp(x))
                                    : op == MapOp::Log     ? std::log(x)
                                    : op == MapOp::Tanh    ? std::tanh(x)
                                    : op == MapOp::Sin     ? std::sin(x)
                                                           : std::cos(x);
                if (std::abs(want) < 1e-37) return 0.0; // below f32's normal range
                return std::abs(got.values()[i] - want) / (relative * std::abs(want) + absolute);
            },
            &where);
        qInfo("worst error / allowed: %.3g (%s)", worst, qPrintable(where));
        QVERIFY2(worst <= 1.0, qPrintable(where));
    }

    void mapOnSplitTensors() {
        const Both x = chunked_->upload(test::randomTensor({50, 70}, 15, 0.1f, 5.0f));
        Both out = chunked_->output({50, 70});
        QVERIFY(split(x));
        onBoth(*chunked_, [&](Backend& be, const Pick& t) {
            DeviceTensor o = t(out).reshaped({7, 500}); // rows of 500 values: any view is flat
            be.map(t(x).reshaped({500, 7}), MapOp::Log, 2.0f, 0.5f, o);
        });
        QVERIFY(chunked_->matches(out, "log, split"));
    }

    // [SECTION] reductions
    void reduceRowsMatchesCpu_data() {
        QTest::addColumn<QList<qlonglong>>("shape");
        QTest::newRow("33x257") << QList<qlonglong>{33, 257};
        QTest::newRow("7x1") << QList<qlonglong>{7, 1};
        QTest::newRow("1x1000") << QList<qlonglong>{1, 1000};
        QTest::newRow("3x5x17") << QList<qlonglong>{3, 5, 17};
    }
    void reduceRowsMatchesCpu() {
        QFETCH(QList<qlonglong>, shape);
        const std::vector<int64_t> s(shape.begin(), shape.end());
        const Both x = upload(test::randomTensor(s, 16, -4.0f, 3.0f)); // max may be negative
        const int64_t rows = elementCount(s) / s.back();
        for (const bool sum : {true, false}) {
            Both out = pair_->output({rows, 1});
            onBoth(*pair_, [&](Backend& be, const Pick& t) {
                DeviceTensor o = t(out);
                be.reduceRows(t(x), sum, o);
            });
            QVERIFY(pair_->matches(out, sum ? "sum" : "max"));
        }
    }

    void reduceRowsOnReshapedAndSplitTensors() {
        const Both x = chunked_->upload(test::randomTensor({60, 100}, 17));
        QVERIFY(split(x));
        // The [60, 100] storage holds 18 rows (1800 values) per buffer: views with rows of 100
        // or 120 values fit whole rows in each, rows of 6000 cannot.
        for (const int64_t cols : {int64_t(100), int64_t(120), int64_t(6000)}) {
            const bool fits = (18 * 100) % cols == 0;
            for (const bool sum : {true, false}) {
                Both out = chunked_->output({6000 / cols, 1});
                if (!fits) {
                    QVERIFY_THROWS_EXCEPTION(
                        vk::VulkanError, chunked_->gpu().reduceRows(
                                             x.gpu.reshaped({6000 / cols, cols}), sum, out.gpu));
                    continue;
                }
                onBoth(*chunked_, [&](Backend& be, const Pick& t) {
                    DeviceTensor o = t(out);
                    be.reduceRows(t(x).reshaped({6000 / cols, cols}), sum, o);
                });
                QVERIFY(chunked_->matches(out, "reduce, split, rows of " + std::to_string(cols)));
            }
        }
    }

    // [SECTION] softmax
    void softmaxMatchesCpu_data() {
        QTest::addColumn<QList<qlonglong>>("shape");
        QTest::addColumn<qlonglong>("maskRows"); // 0: no mask
        QTest::newRow("7x33") << QList<qlonglong>{7, 33} << 0LL;
        QTest::newRow("1x1") << QList<qlonglong>{1, 1} << 0LL;
        QTest::newRow("3x257, mask per row") << QList<qlonglong>{3, 257} << 3LL;
        QTest::newRow("heads 4x9x9, mask 9x9") << QList<qlonglong>{4, 9, 9} << 9LL;
        QTest::newRow("heads 4x9x9, mask 1x9") << QList<qlonglong>{4, 9, 9} << 1LL;
        QTest::newRow("12x300, mask 4x300") << QList<qlonglong>{12, 300} << 4LL;
    }
    void softmaxMatchesCpu() {
        QFETCH(QList<qlonglong>, shape);
        QFETCH(qlonglong, maskRows);
        const std::vector<int64_t> s(shape.begin(), shape.end());
        const Both x = upload(test::randomTensor(s, 18, -30.0f, 30.0f));
        // The mask's last row is all 0 (a fully masked row: uniform), unless it is the only one.
        const Both mask = upload(maskWithEmptyRow(std::max<qlonglong>(maskRows, 1), s.back(),
                                                  maskRows > 1 ? maskRows - 1 : -1, 19));
        Both out = pair_->output(s);
        onBoth(*pair_, [&](Backend& be, const Pick& t) {
            DeviceTensor o = t(out), m = t(mask);
            be.softmax(t(x), maskRows ? &m : nullptr, o);
        });
        QVERIFY(pair_->matches(out, "softmax"));
        Both inPlace = upload(test::randomTensor(s, 20, -5.0f, 5.0f));
        onBoth(*pair_, [&](Backend& be, const Pick& t) {
            DeviceTensor v = t(inPlace), m = t(mask);
            be.softmax(v, maskRows ? &m : nullptr, v);
        });
        QVERIFY(pair_->matches(inPlace, "softmax in place"));
    }

    void softmaxOfFullyMaskedRowIsUniform() {
        const DeviceTensor x = pair_->gpu().upload(test::randomTensor({2, 5}, 21));
        const DeviceTensor mask = pair_->gpu().upload(Tensor({1, 5}, 0.0f));
        DeviceTensor out = pair_->gpu().allocate({2, 5});
        pair_->gpu().softmax(x, &mask, out);
        const Tensor probabilities = pair_->gpu().download(out);
        for (const float p : probabilities.values())
            QCOMPARE(p, 0.2f);
    }

    void softmaxOnSplitTensors() {
        test::BackendPair& pair = *chunked_;
        const Both x = pair.upload(test::randomTensor({3, 20, 100}, 22, -10.0f, 10.0f));
        const Both tall = pair.upload(maskWithEmptyRow(60, 100, 31, 23));
        const Both repeat = pair.upload(maskWithEmptyRow(10, 100, 4, 24));
        QVERIFY(split(x) && split(tall) && !split(repeat));
        for (const Both* mask : {&tall, &repeat}) {
            Both out = pair.output({3, 20, 100});
            onBoth(pair, [&](Backend& be, const Pick& t) {
                DeviceTensor o = t(out), m = t(*mask);
                be.softmax(t(x), &m, o);
            });
            QVERIFY(pair.matches(out, "softmax, split, mask " + shapeString(mask->gpu.shape())));
        }
        const Both wide = pair.upload(maskWithEmptyRow(30, 100, 0, 25));
        Both out = pair.output({3, 20, 100});
        QVERIFY(split(wide));
        QVERIFY_THROWS_EXCEPTION(vk::VulkanError, pair.gpu().softmax(x.gpu, &wide.gpu, out.gpu));
    }

    // [SECTION] matmul
    void matmulMatchesCpu_data() {
        QTest::addColumn<MatmulCase>("c");
        QTest::newRow("2x3·3x2") << MatmulCase{1, 1, 2, 3, 2, false, 1.0f};
        QTest::newRow("7x33·(257x33)ᵀ") << MatmulCase{1, 1, 7, 33, 257, true, 1.0f};
        QTest::newRow("Bb=1, 3x5x17·17x9") << MatmulCase{3, 1, 5, 17, 9, false, 1.0f};
        QTest::newRow("Bb=B, vec4, transposed") << MatmulCase{4, 4, 17, 36, 19, true, 0.5f};
        QTest::newRow("grouped 6/2, vec4") << MatmulCase{6, 2, 33, 64, 7, false, 1.0f};
        QTest::newRow("grouped 6/3, transposed, alpha")
            << MatmulCase{6, 3, 16, 8, 16, true, 0.125f};
        QTest::newRow("T=1, 12 heads over 4") << MatmulCase{12, 4, 1, 64, 1, true, 0.125f};
        QTest::newRow("beyond tiles 70x300") << MatmulCase{2, 1, 70, 13, 300, false, -2.0f};
        QTest::newRow("beyond tiles, transposed") << MatmulCase{2, 2, 70, 40, 300, true, 1.0f};
        QTest::newRow("K=1") << MatmulCase{2, 1, 9, 1, 5, false, 1.0f};
    }
    void matmulMatchesCpu() {
        QFETCH(MatmulCase, c);
        checkMatmul(*pair_, c, "matmul");
    }

    void matmulOf2dTensors() {
        const Both a = upload(Tensor({2, 3}, {1, 2, 3, 4, 5, 6}));
        const Both b = upload(Tensor({3, 2}, {7, 8, 9, 10, 11, 12}));
        Both out = pair_->output({2, 2});
        pair_->gpu().matmul(a.gpu, b.gpu, false, 1.0f, out.gpu);
        const Tensor got = pair_->gpu().download(out.gpu);
        QCOMPARE(std::vector<float>(got.values().begin(), got.values().end()),
                 (std::vector<float>{58, 64, 139, 154}));
    }

    // Talking heads: [H, H] · x [H, T, T] seen as [H, T·T]; a view whose rows start at an offset
    // that is no multiple of 4 (the storage's rows are 7 long) takes the scalar path.
    void matmulOnReshapedTensors() {
        const Both mix = upload(test::randomTensor({3, 3}, 42));
        const Both x = upload(test::randomTensor({3, 8, 8}, 43));
        Both mixed = pair_->output({3, 8, 8});
        onBoth(*pair_, [&](Backend& be, const Pick& t) {
            DeviceTensor o = t(mixed).reshaped({3, 64});
            be.matmul(t(mix), t(x).reshaped({3, 64}), false, 1.0f, o);
        });
        QVERIFY(pair_->matches(mixed, "talking heads"));
        const Both a = upload(test::randomTensor({8, 7}, 44)),
                   b = upload(test::randomTensor({8, 4}, 45));
        Both out = pair_->output({2, 7, 8});
        onBoth(*pair_, [&](Backend& be, const Pick& t) {
            DeviceTensor o = t(out);
            be.matmul(t(a).reshaped({2, 7, 4}), t(b).reshaped({1, 8, 4}), true, 1.0f, o);
        });
        QVERIFY(pair_->matches(out, "misaligned view"));
    }

    void matmulOnSplitTensors() {
        // a [2, 40, 64]: 30 rows per buffer, so batches straddle buffers; a transposed b
        // [2, 100, 64] splits into columns of out; an untransposed b [1, 64, 20] fits one.
        checkMatmul(*chunked_, {2, 2, 40, 64, 100, true, 0.5f}, "matmul, split, transposed");
        checkMatmul(*chunked_, {2, 1, 40, 64, 20, false, 1.0f}, "matmul, split");
        checkMatmul(*chunked_, {4, 2, 20, 64, 30, true, 1.0f}, "matmul, split, grouped");
        const Both a = chunked_->upload(test::randomTensor({2, 40, 64}, 46));
        const Both b = chunked_->upload(test::randomTensor({1, 64, 40}, 47)); // [K, N] split
        Both out = chunked_->output({2, 40, 40});
        QVERIFY(split(a) && split(b));
        QVERIFY_THROWS_EXCEPTION(vk::VulkanError,
                                 chunked_->gpu().matmul(a.gpu, b.gpu, false, 1.0f, out.gpu));
    }

    void matmulMisuseIsRefused() {
        const Both a = upload(test::randomTensor({3, 4, 5}, 48));
        const Both b = upload(test::randomTensor({2, 5, 6}, 49)); // 2 does not divide 3
        Both out = pair_->output({3, 4, 6});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 pair_->gpu().matmul(a.gpu, b.gpu, false, 1.0f, out.gpu));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 pair_->gpu().matmul(a.gpu, a.gpu, false, 1.0f, out.gpu));
    }

    // [SECTION] heads, copies, scatter
    void headsSplitAndMerge() {
        for (test::BackendPair* pair : {pair_.get(), chunked_.get()}) {
            const bool chunked = pair == chunked_.get();
            const int64_t T = chunked ? 50 : 7, heads = chunked ? 4 : 3, d = chunked ? 16 : 5;
            const Both x = pair->upload(test::randomTensor({T, heads * d}, 50));
            Both byHead = pair->output({heads, T, d}), merged = pair->output({T, heads * d});
            onBoth(*pair, [&](Backend& be, const Pick& t) {
                DeviceTensor s = t(byHead), m = t(merged);
                be.splitHeads(t(x), int(heads), s);
                be.mergeHeads(s, m);
            });
            QVERIFY(pair->matches(byHead, "splitHeads", {0.0, 0.0}));
            QVERIFY(pair->matches(merged, "mergeHeads", {0.0, 0.0}));
            QVERIFY(!chunked || (split(x) && split(byHead)));
            const Tensor back = pair->gpu().download(merged.gpu),
                         original = pair->gpu().download(x.gpu);
            QVERIFY(
                std::equal(back.values().begin(), back.values().end(), original.values().begin()));
        }
        const Both one = upload(test::randomTensor({6, 4}, 51));
        Both merged = pair_->output({6, 4});
        onBoth(*pair_, [&](Backend& be, const Pick& t) {
            DeviceTensor m = t(merged);
            be.mergeHeads(t(one), m); // 2-D: one head
        });
        QVERIFY(pair_->matches(merged, "mergeHeads of one head", {0.0, 0.0}));
        Both wrong = pair_->output({3, 6, 1});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 pair_->gpu().splitHeads(one.gpu, 3, wrong.gpu));
    }

    void copyRowsCopiesRows() {
        for (test::BackendPair* pair : {pair_.get(), chunked_.get()}) {
            const Both src = pair->upload(test::randomTensor({40, 100}, 52));
            Both dst = pair->upload(test::randomTensor({3, 15, 100}, 53));
            onBoth(*pair, [&](Backend& be, const Pick& t) {
                DeviceTensor d = t(dst);
                be.copyRows(t(src), 3, 30, d, 14);
                be.copyRows(t(src), 39, 1, d, 0);
            });
            QVERIFY(pair->matches(dst, "copyRows", {0.0, 0.0}));
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                     pair->gpu().copyRows(src.gpu, 30, 11, dst.gpu, 0));
        }
        const Both src = upload(test::randomTensor({4, 6}, 54));
        Both dst = upload(test::randomTensor({3, 8}, 55));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 pair_->gpu().copyRows(src.gpu, 0, 1, dst.gpu, 0));
    }

    void scatterAddRowsAccumulates() {
        const std::vector<int32_t> ids{3, 0, 3, 5, 3, 1};
        const std::vector<float> weights{0.5f, -1.0f, 2.0f, 1.0f, 0.25f, 3.0f};
        const Both src = upload(test::randomTensor({6, 33}, 56));
        Both out = upload(test::randomTensor({7, 33}, 57));
        onBoth(*pair_, [&](Backend& be, const Pick& t) {
            DeviceTensor o = t(out);
            be.scatterAddRows(t(src), ids, weights, o);
        });
        QVERIFY(pair_->matches(out, "scatterAddRows"));
        const std::vector<int32_t> bad{0, 1, 2, 3, 4, 7};
        QVERIFY_THROWS_EXCEPTION(std::out_of_range,
                                 pair_->gpu().scatterAddRows(src.gpu, bad, weights, out.gpu));
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            pair_->gpu().scatterAddRows(src.gpu, ids, std::vector<float>{1.0f}, out.gpu));
    }

    void scatterAddRowsOnSplitTensors() {
        std::vector<int32_t> ids(40);
        std::vector<float> weights(40);
        for (std::size_t i = 0; i < ids.size(); ++i) {
            ids[i] = int32_t((i * 7) % 30);
            weights[i] = 0.1f * float(i) - 1.5f;
        }
        const Both src = chunked_->upload(test::randomTensor({40, 100}, 58));
        Both out = chunked_->upload(test::randomTensor({30, 100}, 59));
        QVERIFY(split(src) && split(out));
        onBoth(*chunked_, [&](Backend& be, const Pick& t) {
            DeviceTensor o = t(out);
            be.scatterAddRows(t(src), ids, weights, o);
        });
        QVERIFY(chunked_->matches(out, "scatterAddRows, split"));
    }

    // [SECTION] causal linear attention
    void causalLinearAttentionMatchesCpu_data() {
        QTest::addColumn<QList<qlonglong>>("qShape");
        QTest::addColumn<qlonglong>("d");
        QTest::addColumn<float>("eps");
        QTest::newRow("3 batches, T=17, m=16, d=70")
            << QList<qlonglong>{3, 17, 16} << 70LL << 1e-6f;
        QTest::newRow("2-D, T=1, large eps") << QList<qlonglong>{1, 8} << 5LL << 0.5f;
        QTest::newRow("T=33, m=100, d=64") << QList<qlonglong>{2, 33, 100} << 64LL << 1e-6f;
    }
    void causalLinearAttentionMatchesCpu() {
        QFETCH(QList<qlonglong>, qShape);
        QFETCH(qlonglong, d);
        QFETCH(float, eps);
        const std::vector<int64_t> qs(qShape.begin(), qShape.end());
        std::vector<int64_t> vs = qs;
        vs.back() = d;
        const Both q = upload(features(qs, 60)), k = upload(features(qs, 61));
        const Both v = upload(test::randomTensor(vs, 62));
        Both out = pair_->output(vs);
        onBoth(*pair_, [&](Backend& be, const Pick& t) {
            DeviceTensor o = t(out);
            be.causalLinearAttention(t(q), t(k), t(v), eps, o);
        });
        QVERIFY(pair_->matches(out, "causalLinearAttention"));
    }

    void causalLinearAttentionOnSplitTensors() {
        // Rows of 32 values: 62 per buffer, i.e. two batches of T = 31 each.
        const Both q = chunked_->upload(features({4, 31, 32}, 63)),
                   k = chunked_->upload(features({4, 31, 32}, 64));
        const Both v = chunked_->upload(test::randomTensor({4, 31, 32}, 65));
        Both out = chunked_->output({4, 31, 32});
        QVERIFY(split(q) && split(v) && split(out));
        onBoth(*chunked_, [&](Backend& be, const Pick& t) {
            DeviceTensor o = t(out);
            be.causalLinearAttention(t(q), t(k), t(v), 1e-6f, o);
        });
        QVERIFY(chunked_->matches(out, "causalLinearAttention, split"));
        // T = 40 puts the second batch across a buffer boundary: refused, not wrong.
        const Both q2 = chunked_->upload(features({2, 40, 32}, 66));
        Both out2 = chunked_->output({2, 40, 32});
        QVERIFY_THROWS_EXCEPTION(vk::VulkanError, chunked_->gpu().causalLinearAttention(
                                                      q2.gpu, q2.gpu, q2.gpu, 1e-6f, out2.gpu));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, chunked_->gpu().causalLinearAttention(
                                                            q.gpu, q2.gpu, v.gpu, 1e-6f, out.gpu));
    }

    // [SECTION] sparse attention
    void sparseAttentionMatchesCpu_data() {
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("kvHeads");
        QTest::addColumn<int>("patternHeads");
        QTest::addColumn<int>("tokens");
        QTest::addColumn<int>("dim");
        QTest::addColumn<bool>("alibi");
        QTest::newRow("shared pattern, grouped kv, ALiBi, T=37, d=24")
            << 4 << 2 << 1 << 37 << 24 << true;
        QTest::newRow("per-head pattern, T=70, d=70 (> workgroup)")
            << 3 << 3 << 3 << 70 << 70 << false;
        QTest::newRow("one head, T=130, d=8") << 1 << 1 << 1 << 130 << 8 << false;
    }
    void sparseAttentionMatchesCpu() {
        QFETCH(int, heads);
        QFETCH(int, kvHeads);
        QFETCH(int, patternHeads);
        QFETCH(int, tokens);
        QFETCH(int, dim);
        QFETCH(bool, alibi);
        const SparsePattern pattern = randomPattern(patternHeads, tokens, 80);
        const Both q = upload(test::randomTensor({heads, tokens, dim}, 81));
        const Both k = upload(test::randomTensor({kvHeads, tokens, dim}, 82));
        const Both v = upload(test::randomTensor({kvHeads, tokens, dim}, 83));
        std::vector<float> slopes;
        for (int h = 0; alibi && h < heads; ++h)
            slopes.push_back(0.5f / float(h + 1));
        Both context = pair_->output({heads, tokens, dim});
        Both weights = pair_->output({heads / patternHeads, pattern.entries()});
        onBoth(*pair_, [&](Backend& be, const Pick& t) {
            DeviceTensor c = t(context), w = t(weights);
            be.sparseAttention(t(q), t(k), t(v), pattern, 0.3f, slopes, c, &w);
        });
        QVERIFY(pair_->matches(context, "sparseAttention context"));
        QVERIFY(pair_->matches(weights, "sparseAttention weights"));
    }

    // The row ops outside this section address storage rows: a view with other rows is refused.
    void rowOpsRefuseViewsWithOtherRows() {
        const Both x = upload(test::randomTensor({4, 6}, 70));
        const Both gamma = upload(test::randomTensor({4}, 71));
        DeviceTensor view = x.gpu.reshaped({6, 4});
        QVERIFY_THROWS_EXCEPTION(vk::VulkanError,
                                 pair_->gpu().rmsNorm(view, gamma.gpu, 1e-5f, view));
        QVERIFY_THROWS_EXCEPTION(vk::VulkanError,
                                 pair_->gpu().rope(view, 1, 4, std::vector<int32_t>(6, 0), 1e4));
    }

    // Ops recorded back to back read each other's results through barriers.
    void chainedOpsMatchCpu() {
        const Both q = upload(test::randomTensor({9, 2 * 8}, 67)),
                   k = upload(test::randomTensor({9, 2 * 8}, 68));
        const Both v = upload(test::randomTensor({9, 2 * 8}, 69));
        Both context = pair_->output({9, 16});
        onBoth(*pair_, [&](Backend& be, const Pick& t) {
            DeviceTensor qh = be.allocate({2, 9, 8}), kh = be.allocate({2, 9, 8}),
                         vh = be.allocate({2, 9, 8});
            be.splitHeads(t(q), 2, qh);
            be.splitHeads(t(k), 2, kh);
            be.splitHeads(t(v), 2, vh);
            DeviceTensor scores = be.allocate({2, 9, 9}), heads = be.allocate({2, 9, 8});
            be.matmul(qh, kh, true, 0.25f, scores);
            be.softmax(scores, nullptr, scores);
            be.matmul(scores, vh, false, 1.0f, heads);
            DeviceTensor o = t(context);
            be.mergeHeads(heads, o);
        });
        QVERIFY(pair_->matches(context, "split → QKᵀ → softmax → ·V → merge"));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestVulkanTensorAlgebraParity)
#include "test_vulkan_tensor_algebra_parity.moc"
