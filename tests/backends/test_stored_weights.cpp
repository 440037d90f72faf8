// A weight kept in its stored dtype (Backend::uploadStored): linear and gatherRows give what the
// same values widened to f32 give, for BF16, F16 and unaligned F32, on shapes whose rows span one
// and several of the CPU GEMM's widened panels; the reference is a double-precision product
// computed here. allFinite reads NaN and Inf from the stored bits.
#include "backend_fixture.h"
#include "compare.h"
#include "io/dtype_widening.h"
#include "io/stored_matrix.h"

#include <Eigen/Core>
#include <QTest>
#include <cmath>
#include <cstring>
#include <random>

using namespace headlight;

namespace {

// A matrix of random values stored in `dtype`, `offset` bytes into its buffer (an odd offset
// leaves F32 unaligned, as a safetensors header of any length may), with its exact f32 values.
struct StoredCase {
    std::vector<std::byte> buffer;
    io::StoredMatrix matrix;
    std::vector<float> values;
};

StoredCase makeStored(io::DType dtype, int64_t rows, int64_t cols, std::size_t offset,
                      uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.5f);
    StoredCase c;
    const std::size_t count = std::size_t(rows * cols), size = io::dtypeSize(dtype);
    c.buffer.resize(offset + count * size);
    std::byte* at = c.buffer.data() + offset;
    for (std::size_t i = 0; i < count; ++i) {
        const float v = normal(rng);
        uint16_t bits = 0;
        if (dtype == io::DType::F32)
            std::memcpy(at + i * 4, &v, 4);
        else if (dtype == io::DType::BF16)
            bits = Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(v));
        else
            bits = Eigen::numext::bit_cast<uint16_t>(Eigen::half(v));
        if (dtype != io::DType::F32) std::memcpy(at + i * 2, &bits, 2);
    }
    c.values.resize(count);
    io::widenToF32(dtype, {at, count * size}, c.values.data());
    c.matrix = {dtype, at, rows, cols, nullptr};
    return c;
}

std::vector<float> randomInput(int64_t m, int64_t k) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> x(std::size_t(m * k));
    for (float& v : x)
        v = uniform(rng);
    return x;
}
} // namespace

class TestStoredWeights : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

public:
    explicit TestStoredWeights(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void linearMatchesTheWidenedProduct_data() {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("offset");
        // k = 1000: panels of 262 rows, so n = 600 spans three, the last one short.
        for (const io::DType dtype : {io::DType::BF16, io::DType::F16, io::DType::F32}) {
            const QString name = io::dtypeName(dtype);
            QTest::newRow(qPrintable(name + " one row")) << int(dtype) << 1 << 64 << 40 << 0;
            QTest::newRow(qPrintable(name + " panels")) << int(dtype) << 9 << 1000 << 600 << 2;
            QTest::newRow(qPrintable(name + " one panel")) << int(dtype) << 33 << 48 << 17 << 6;
        }
    }

    void linearMatchesTheWidenedProduct() {
        QFETCH(int, dtype);
        QFETCH(int, m);
        QFETCH(int, k);
        QFETCH(int, n);
        QFETCH(int, offset);
        const StoredCase w = makeStored(io::DType(dtype), n, k, std::size_t(offset), 11);
        const std::vector<float> x = randomInput(m, k);
        Backend& backend = fixture_.backend();
        const DeviceTensor weight = backend.uploadStored(w.matrix);
        QCOMPARE(weight.shape(), (std::vector<int64_t>{n, k}));
        const DeviceTensor input = backend.upload(Tensor({m, k}, x));
        DeviceTensor out = backend.allocate({m, n});
        backend.linear(input, weight, nullptr, out);
        const Tensor result = backend.download(out);

        QString where;
        const double worst = test::worstError(
            std::size_t(m * n),
            [&](std::size_t e) {
                const int i = int(e) / n, j = int(e) % n;
                double expected = 0.0;
                for (int p = 0; p < k; ++p)
                    expected += double(x[std::size_t(i * k + p)]) *
                                double(w.values[std::size_t(j * k + p)]);
                return std::abs(expected - double(result.values()[e]));
            },
            &where);
        QVERIFY2(worst <= 1e-4,
                 qPrintable(QString("max |difference| %1 (%2)").arg(worst).arg(where)));
    }

    void gatherRowsReadsTheStoredRows() {
        for (const io::DType dtype : {io::DType::BF16, io::DType::F16, io::DType::F32}) {
            const StoredCase table = makeStored(dtype, 50, 24, 2, 5);
            Backend& backend = fixture_.backend();
            const DeviceTensor stored = backend.uploadStored(table.matrix);
            const std::vector<int32_t> ids{49, 0, 7, 7};
            DeviceTensor out = backend.allocate({4, 24});
            backend.gatherRows(stored, ids, out);
            const Tensor rows = backend.download(out);
            for (std::size_t t = 0; t < ids.size(); ++t)
                for (std::size_t c = 0; c < 24; ++c)
                    QCOMPARE(rows.values()[t * 24 + c], table.values[std::size_t(ids[t]) * 24 + c]);
        }
    }

    void allFiniteReadsTheStoredBits() {
        for (const io::DType dtype : {io::DType::BF16, io::DType::F16, io::DType::F32}) {
            StoredCase c = makeStored(dtype, 3, 5, 0, 3);
            QVERIFY(io::allFinite(c.matrix));
            const std::size_t size = io::dtypeSize(dtype);
            for (const float bad : {std::numeric_limits<float>::infinity(), std::nanf("")}) {
                StoredCase broken = makeStored(dtype, 3, 5, 0, 3);
                const uint32_t bits = Eigen::numext::bit_cast<uint32_t>(bad);
                // The top `size` bytes of the f32 are the BF16; F16's Inf and NaN share the
                // all-ones exponent, 0x7C00 and up.
                const uint32_t stored = dtype == io::DType::F32 ? bits
                                        : dtype == io::DType::BF16
                                            ? bits >> 16
                                            : (bad == bad ? 0x7C00u : 0x7E00u);
                std::memcpy(broken.buffer.data() + 7 * size, &stored, size);
                QVERIFY(!io::allFinite(broken.matrix));
            }
        }
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestStoredWeights)
#include "test_stored_weights.moc"
