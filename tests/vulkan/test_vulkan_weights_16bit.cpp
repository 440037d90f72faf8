// F16 and BF16 weights kept in 16 bits on the device (VulkanBackend::uploadStored where the device
// has storageBuffer16BitAccess, as lavapipe does): linear reads them in the matmul shader and
// gatherRows in its gather, half the device memory of the f32 path. Against the CPU backend on
// the same stored matrix (within 1e-4), against the forced f32 path (widenStoredWeights, exactly
// the same numbers: widening is exact and the kernels sum in the same order), with weights split
// over several storage buffers, and on BF16 / F16 twins of the Llama, Qwen3 and BERT goldens
// (test::writeRoundedTwins) against their f32 twins within 1e-4.
#include "backend/backend.h"
#include "backend/vulkan/context.h"
#include "backend/vulkan/vulkan_backend.h"
#include "backend/vulkan/vulkan_storage.h"
#include "golden.h"
#include "io/dtype_widening.h"
#include "io/stored_matrix.h"
#include "model/memory_budget.h"
#include "model/transformer.h"
#include "rounded_twins.h"
#include "temp_files.h"
#include "vulkan_fixture.h"

#include <QTest>
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <random>
#include <set>
#include <stdexcept>

using namespace headlight;

namespace {

// Random normal values rounded to `dtype`: the stored bits and the f32 values they widen to.
struct StoredCase {
    std::vector<std::byte> bits;
    io::StoredMatrix matrix;
    std::vector<float> values;
};

StoredCase randomStored(io::DType dtype, int64_t rows, int64_t cols, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.5f);
    StoredCase c;
    const auto count = std::size_t(rows * cols);
    c.bits.resize(count * sizeof(uint16_t));
    for (std::size_t i = 0; i < count; ++i) {
        const test::Rounded r = test::roundTo(dtype, normal(rng));
        std::memcpy(c.bits.data() + i * sizeof r.bits, &r.bits, sizeof r.bits);
        c.values.push_back(r.value);
    }
    c.matrix = {dtype, c.bits.data(), rows, cols, nullptr};
    return c;
}

constexpr std::size_t kSplitBytes = 32768; // the split backend's storage binding limit

std::size_t wholeWords(std::size_t bytes) {
    return (bytes + 3) / 4 * 4;
}

// One load and pass of a checkpoint on a fresh Vulkan backend, with the device memory it took.
struct Run {
    Trace trace;
    std::size_t weightBytes = 0; // VulkanBackend::storedWeightBytes after the load
    uint64_t allocatedBytes = 0; // the context's allocations made by the load
};

Run runOn(const std::shared_ptr<vk::Context>& context, const vk::VulkanBackendOptions& options,
          const QString& folder, const ModelInput& input) {
    vk::VulkanBackend backend(context, options);
    const uint64_t before = context->allocatedBytes();
    const auto model = loadModel(folder.toStdString(), backend);
    Run run;
    run.allocatedBytes = context->allocatedBytes() - before;
    run.weightBytes = backend.storedWeightBytes();
    CaptureRequest capture;
    capture.hiddenStates = true;
    run.trace = model->forward(input, capture);
    return run;
}

// The device-memory plan (deviceLoadBytes) against the bytes each load allocated: the weights
// (16-bit matrices in their stored bytes, the rest f32; or all f32), one staging copy of the
// largest tensor while it is uploaded, freed after it, and, beyond the checkpoint, the model's
// own identity norm (gamma and beta, [D] each). Llama's untied LM head stays in 16 bits like
// every other matrix; BERT's layout widens its three embedding tables, which the plan counts as
// f32, and never uploads its pooler, which the plan counts anyway (HF drops it from the base).
void verifyDevicePlan(const QString& model, const QString& folder, const Run& sixteen,
                      const Run& widened) {
    const io::Checkpoint checkpoint(folder.toStdString());
    const ModelSpec spec = loadModelConfig(folder.toStdString());
    const std::set<std::string> widenedTables =
        model == "bert" ? std::set<std::string>{"embeddings.word_embeddings.weight",
                                                "embeddings.position_embeddings.weight",
                                                "embeddings.token_type_embeddings.weight"}
                        : std::set<std::string>{};
    double weights16 = 0.0, weights32 = 0.0, largest16 = 0.0, largest32 = 0.0;
    double pooler16 = 0.0, pooler32 = 0.0;
    for (const std::string& name : checkpoint.names()) {
        const io::TensorInfo& info = checkpoint.info(name);
        const double f32 = double(elementCount(info.shape)) * 4.0;
        const bool mapped = info.shape.size() == 2 && !widenedTables.contains(name);
        const double kept = mapped ? double(wholeWords(std::size_t(f32) / 2)) : f32;
        weights16 += kept;
        weights32 += f32;
        largest16 = std::max(largest16, kept);
        largest32 = std::max(largest32, f32);
        if (name.starts_with("pooler.")) {
            pooler16 += kept;
            pooler32 += f32;
        }
    }
    QCOMPARE(checkpoint.contains("lm_head.weight"), model == "llama");
    QCOMPARE(deviceLoadBytes(checkpoint, spec, true), weights16 + largest16);
    QCOMPARE(deviceLoadBytes(checkpoint, spec, false), weights32 + largest32);
    const double identityNorm = 2.0 * double(spec.hidden) * 4.0;
    QCOMPARE(double(widened.allocatedBytes), weights32 - pooler32 + identityNorm);
    QCOMPARE(double(sixteen.allocatedBytes), weights16 - pooler16 + identityNorm);
}

void verifySameTrace(const Trace& got, const Trace& want, double tolerance) {
    QString where;
    QVERIFY2(test::maxAbsDiff(got.stackedProbabilities(), want.stackedProbabilities(), &where) <=
                 tolerance,
             qPrintable("attentions " + where));
    QCOMPARE(got.hiddenStates.size(), want.hiddenStates.size());
    for (std::size_t l = 0; l < want.hiddenStates.size(); ++l)
        QVERIFY2(test::maxAbsDiff(got.hiddenStates[l], want.hiddenStates[l], &where) <= tolerance,
                 qPrintable(QString("hidden_states[%1] ").arg(l) + where));
    QVERIFY2(test::maxAbsDiff(got.lastHiddenState, want.lastHiddenState, &where) <= tolerance,
             qPrintable("last_hidden_state " + where));
}
} // namespace

class TestVulkanWeights16Bit : public QObject {
    Q_OBJECT
    std::shared_ptr<vk::Context> context_;
    std::unique_ptr<vk::VulkanBackend> sixteen_, widened_, split_;
    std::unique_ptr<Backend> cpu_;
    test::ScratchDir scratch_;

private Q_SLOTS:
    void initTestCase() {
        context_ = test::makeContext();
        sixteen_ = std::make_unique<vk::VulkanBackend>(context_);
        widened_ = std::make_unique<vk::VulkanBackend>(
            context_, vk::VulkanBackendOptions{.widenStoredWeights = true});
        // 32 KiB buffers split the larger weights by rows; guard rows catch writes out of bounds.
        split_ = std::make_unique<vk::VulkanBackend>(
            context_, vk::VulkanBackendOptions{.maxBindingBytes = kSplitBytes, .guardRows = 1});
        cpu_ = makeCpuBackend();
    }
    void cleanupTestCase() {
        sixteen_.reset();
        widened_.reset();
        split_.reset();
        test::verifyNoValidationErrors(*context_);
    }

    // The tests are pinned to lavapipe, which has the feature: the 16-bit path is never skipped.
    void lavapipeKeepsWeightsIn16Bits() {
        QVERIFY(context_->info().storageBuffer16Bit);
        QVERIFY(sixteen_->keepsWeights16Bit());
        QVERIFY(split_->keepsWeights16Bit());
        QVERIFY(!widened_->keepsWeights16Bit());
    }

    void linearMatchesTheCpuAndTheF32Path_data() {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("n");
        for (const io::DType dtype : {io::DType::BF16, io::DType::F16}) {
            const QString name = io::dtypeName(dtype);
            // k % 4 == 0 takes the vec4 loads; odd k the scalar ones, with rows starting
            // halfway into a uint; k = 1000 spans many buffers of the split backend.
            QTest::newRow(qPrintable(name + " one row")) << int(dtype) << 1 << 64 << 40;
            QTest::newRow(qPrintable(name + " vec4")) << int(dtype) << 9 << 1000 << 600;
            QTest::newRow(qPrintable(name + " odd k")) << int(dtype) << 33 << 33 << 7;
            QTest::newRow(qPrintable(name + " k % 4 == 2")) << int(dtype) << 17 << 30 << 70;
        }
    }

    void linearMatchesTheCpuAndTheF32Path() {
        QFETCH(int, dtype);
        QFETCH(int, m);
        QFETCH(int, k);
        QFETCH(int, n);
        const StoredCase w = randomStored(io::DType(dtype), n, k, 11);
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
        Tensor x({m, k}), bias({n});
        for (Tensor* t : {&x, &bias})
            for (float& v : t->values())
                v = uniform(rng);

        std::vector<Tensor> results;
        for (Backend* backend : std::initializer_list<Backend*>{sixteen_.get(), widened_.get(),
                                                                split_.get(), cpu_.get()}) {
            const DeviceTensor weight = backend->uploadStored(w.matrix);
            if (backend == split_.get())
                QCOMPARE(vk::storageOf(weight).singleChunk(),
                         std::size_t(n * k) * 2 <= kSplitBytes);
            const DeviceTensor input = backend->upload(x), b = backend->upload(bias);
            DeviceTensor out = backend->allocate({m, n});
            backend->linear(input, weight, &b, out);
            results.push_back(backend->download(out));
            QVERIFY(std::ranges::equal(backend->download(weight).values(), w.values)); // exact
            if (backend == sixteen_.get() || backend == widened_.get()) {
                const vk::VulkanStorage& storage = vk::storageOf(weight);
                const bool in16 = backend == sixteen_.get();
                QCOMPARE(storage.dtype(), !in16                          ? vk::StoredDType::F32
                                          : dtype == int(io::DType::F16) ? vk::StoredDType::F16
                                                                         : vk::StoredDType::BF16);
                QCOMPARE(storage.deviceBytes(),
                         in16 ? wholeWords(std::size_t(n * k) * 2) : std::size_t(n * k) * 4);
            }
        }
        // The f32 path gives the same numbers.
        QVERIFY(std::ranges::equal(results[0].values(), results[1].values()));
        QString where;
        for (std::size_t i : {std::size_t(0), std::size_t(2)})
            QVERIFY2(test::maxAbsDiff(results[i], results[3], &where) <= 1e-4,
                     qPrintable(QString("backend %1 against the CPU: ").arg(i) + where));
    }

    void gatherRowsReadsThe16BitRows() {
        for (const io::DType dtype : {io::DType::BF16, io::DType::F16})
            for (const int64_t cols : {24, 33}) { // 33: odd rows start halfway into a uint
                const StoredCase table = randomStored(dtype, 1000, cols, 5); // split: 2-3 buffers
                const std::vector<int32_t> ids{999, 0, 7, 7, 700, 1, 500};
                for (vk::VulkanBackend* backend : {sixteen_.get(), split_.get()}) {
                    const DeviceTensor stored = backend->uploadStored(table.matrix);
                    QVERIFY(vk::storageOf(stored).dtype() != vk::StoredDType::F32);
                    QCOMPARE(vk::storageOf(stored).singleChunk(), backend == sixteen_.get());
                    DeviceTensor out = backend->allocate({int64_t(ids.size()), cols});
                    backend->gatherRows(stored, ids, out);
                    const Tensor rows = backend->download(out);
                    for (std::size_t t = 0; t < ids.size(); ++t)
                        for (std::size_t c = 0; c < std::size_t(cols); ++c)
                            QCOMPARE(rows.values()[t * std::size_t(cols) + c],
                                     table.values[std::size_t(ids[t] * cols) + c]);
                }
            }
    }

    // Only linear and gatherRows read 16-bit storage; any other op would read it as floats.
    void otherOpsRefuseA16BitWeight() {
        const StoredCase w = randomStored(io::DType::BF16, 4, 8, 3);
        const DeviceTensor weight = sixteen_->uploadStored(w.matrix);
        DeviceTensor out = sixteen_->allocate({4, 8});
        QVERIFY_THROWS_EXCEPTION(std::logic_error,
                                 sixteen_->activation(weight, Activation::Relu, out));
    }

    void goldenTwinsMatchTheirF32Twins_data() { test::addRoundedTwinRows(); }

    void goldenTwinsMatchTheirF32Twins() {
        QFETCH(QString, model);
        QFETCH(int, dtype);
        const test::GoldenCase golden = test::goldenCaseOf(model);
        QVERIFY2(!golden.folder.isEmpty(), qPrintable("no golden case for " + model));
        const io::SafetensorsFile expected(golden.tensorsPath().toStdString());
        const ModelInput input = test::goldenInput(expected);
        const auto [storedFolder, f32Folder] =
            test::writeRoundedTwins(golden.folder, io::DType(dtype), scratch_);

        const Run sixteen = runOn(context_, {}, storedFolder, input);
        const Run widened = runOn(context_, {.widenStoredWeights = true}, storedFolder, input);
        const Run f32Twin = runOn(context_, {}, f32Folder, input);
        qInfo("%s: weights %zu bytes in 16 bits, %zu widened; the load allocated %llu bytes, "
              "%llu widened",
              QTest::currentDataTag(), sixteen.weightBytes, widened.weightBytes,
              static_cast<unsigned long long>(sixteen.allocatedBytes),
              static_cast<unsigned long long>(widened.allocatedBytes));
        // The 16-bit path was taken: its weights take half the bytes, and so much less memory.
        QVERIFY(sixteen.weightBytes > 0);
        QCOMPARE(2 * sixteen.weightBytes, widened.weightBytes);
        QVERIFY(widened.allocatedBytes - sixteen.allocatedBytes >= sixteen.weightBytes);
        verifySameTrace(sixteen.trace, widened.trace, 0.0);
        verifySameTrace(sixteen.trace, f32Twin.trace, test::kGoldenTolerance);
        verifyDevicePlan(model, storedFolder, sixteen, widened);
    }
};

HEADLIGHT_TEST_APPLESS_MAIN(TestVulkanWeights16Bit)
#include "test_vulkan_weights_16bit.moc"
