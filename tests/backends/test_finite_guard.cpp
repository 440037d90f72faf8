// The debug guard of core/backend/finite_guard.h on each backend: it names the op that made the
// first NaN or Inf, lets a finite pass through unchanged, and a forward pass of every golden
// checkpoint through it meets no non-finite value (so a debug build runs them all).
#include "backend/finite_guard.h"
#include "backend_fixture.h"
#include "golden.h"
#include "model/transformer.h"

#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

using namespace headlight;

class TestFiniteGuard : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

    // The message the guard throws for `op`, or "" when it throws nothing.
    template <typename Op> static QString guardMessage(Op op) {
        try {
            op();
        } catch (const NonFiniteValue& error) {
            return QString::fromUtf8(error.what());
        }
        return {};
    }

public:
    explicit TestFiniteGuard(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void namesTheOpAndIndexOfTheFirstNaN() {
        const auto guard = makeFiniteGuard(fixture_.another());
        const DeviceTensor x = guard->upload(Tensor({4}, {1.0f, 2.0f, -1.0f, -4.0f}));
        DeviceTensor out = guard->allocate({4});
        const QString message = guardMessage([&] { guard->map(x, MapOp::Log, 1.0f, 0.0f, out); });
        QVERIFY2(message.contains("map(Log)") && message.contains("index 2 of [4]") &&
                     message.contains("nan"),
                 qPrintable(message));
    }

    void namesTheOpThatMadeAnInfinity() {
        const auto guard = makeFiniteGuard(fixture_.another());
        const DeviceTensor a = guard->upload(Tensor({1, 3}, {1.0f, 2.0f, 3.0f}));
        const DeviceTensor b = guard->upload(Tensor({1, 3}, {1.0f, 1.0f, 0.0f}));
        DeviceTensor out = guard->allocate({1, 3});
        const QString message = guardMessage([&] { guard->binary(a, b, BinaryOp::Div, out); });
        QVERIFY2(message.contains("binary(Div)") && message.contains("index 2 of [1, 3]") &&
                     message.contains("inf"),
                 qPrintable(message));
    }

    void refusesANonFiniteUpload() {
        const auto guard = makeFiniteGuard(fixture_.another());
        const float nan = std::numeric_limits<float>::quiet_NaN();
        const QString message = guardMessage([&] {
            guard->upload(Tensor({3}, {nan, 0.0f, 1.0f}));
        });
        QVERIFY2(message.contains("upload") && message.contains("index 0 of [3]"),
                 qPrintable(message));
    }

    // A fully masked softmax row is uniform (Hugging Face's semantics), never NaN, so the guard
    // lets it through and the values are the inner backend's.
    void passesAFullyMaskedRowUnchanged() {
        const auto guard = makeFiniteGuard(fixture_.another());
        const DeviceTensor x = guard->upload(Tensor({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}));
        const DeviceTensor mask = guard->upload(Tensor({2, 4}, {1, 1, 0, 0, 0, 0, 0, 0}));
        DeviceTensor out = guard->allocate({2, 4});
        QCOMPARE(guardMessage([&] { guard->softmax(x, &mask, out); }), QString());
        const Tensor probs = guard->download(out);
        const double e = std::exp(1.0);
        const std::vector<double> want{1 / (1 + e), e / (1 + e), 0, 0, 0.25, 0.25, 0.25, 0.25};
        for (std::size_t i = 0; i < want.size(); ++i)
            QVERIFY2(
                std::abs(probs.data()[i] - want[i]) <= 1e-6,
                qPrintable(
                    QString("element %1: %2, want %3").arg(i).arg(probs.data()[i]).arg(want[i])));
    }

    // Every golden checkpoint's pass, every op checked: no op of any family makes a non-finite
    // value on its golden inputs (padding, soft-capping and sliding windows included), and the
    // guarded pass equals the plain one bit for bit.
    void everyGoldenPassIsFiniteThroughout() {
        const auto cases = test::goldenCases();
        QVERIFY2(cases.size() >= 20, "expected the golden cases of tools/golden/make_goldens.py");
        const auto guard = makeFiniteGuard(fixture_.another());
        for (const test::GoldenCase& golden : cases) {
            const io::SafetensorsFile expected(golden.tensorsPath().toStdString());
            const ModelInput input = test::goldenInput(expected);
            CaptureRequest capture;
            capture.hiddenStates = true;
            Trace guarded, plain;
            try {
                guarded = loadModel(golden.folder.toStdString(), *guard)->forward(input, capture);
            } catch (const NonFiniteValue& error) {
                QFAIL(qPrintable(golden.model + "/" + golden.name() + ": " + error.what()));
            }
            plain =
                loadModel(golden.folder.toStdString(), fixture_.backend())->forward(input, capture);
            QVERIFY2(!plain.lastHiddenState.empty(),
                     qPrintable(golden.model + "/" + golden.name()));
            QVERIFY2(guarded.lastHiddenState.shape() == plain.lastHiddenState.shape() &&
                         std::equal(plain.lastHiddenState.values().begin(),
                                    plain.lastHiddenState.values().end(),
                                    guarded.lastHiddenState.values().begin()),
                     qPrintable(golden.model + "/" + golden.name() + ": the guarded pass differs"));
        }
    }

    // HEADLIGHT_FINITE_GUARD=1 puts the guard into makeCpuBackend and makeVulkanBackend in any
    // build, and 0 leaves it out in any build (a Debug build has it when the variable is unset).
    void theEnvironmentSwitchesItOnAndOff() {
        qputenv("HEADLIGHT_FINITE_GUARD", "1");
        const auto backend = fixture_.another();
        qunsetenv("HEADLIGHT_FINITE_GUARD");
        QVERIFY(finiteGuardEnabled() == !kReleaseBuild);
        const DeviceTensor x = backend->upload(Tensor({2}, {-1.0f, 4.0f}));
        DeviceTensor out = backend->allocate({2});
        const QString message =
            guardMessage([&] { backend->map(x, MapOp::Sqrt, 1.0f, 0.0f, out); });
        QVERIFY2(message.contains("map(Sqrt)") && message.contains("index 0 of [2]"),
                 qPrintable(message));
        qputenv("HEADLIGHT_FINITE_GUARD", "0");
        const auto raw = fixture_.another();
        qunsetenv("HEADLIGHT_FINITE_GUARD");
        const DeviceTensor y = raw->upload(Tensor({2}, {-1.0f, 4.0f}));
        DeviceTensor root = raw->allocate({2});
        QCOMPARE(guardMessage([&] { raw->map(y, MapOp::Sqrt, 1.0f, 0.0f, root); }), QString());
        QVERIFY(std::isnan(raw->download(root).data()[0]));
    }

private:
#ifdef NDEBUG
    static constexpr bool kReleaseBuild = true;
#else
    static constexpr bool kReleaseBuild = false;
#endif
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestFiniteGuard)
#include "test_finite_guard.moc"
