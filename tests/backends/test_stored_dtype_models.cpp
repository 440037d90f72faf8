// Checkpoints stored in BF16 and F16 run with their weights left in the mapped file (the CPU
// widens panels inside the GEMM and reads embedding rows in place; Vulkan keeps them in 16 bits
// where the device can, test_vulkan_weights_16bit checks that path and its f32 fallback).
// Widening is exact, so a pass must give what the f32 path gives on the same values: each
// golden checkpoint's weights are rounded to the dtype and written twice, once in that dtype and
// once as f32, and the two passes agree within 1e-4 (attentions, every hidden state, and the
// logits of a model with an LM head: Llama's untied head stays mapped too) on the golden input.
// The f32 path itself is held to PyTorch by test_golden_models.
#include "backend_fixture.h"
#include "golden.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "model/transformer.h"
#include "rounded_twins.h"
#include "temp_files.h"

#include <QTest>

using namespace headlight;

namespace {

Trace runOn(const QString& folder, Backend& backend, const ModelInput& input) {
    const auto model = loadModel(folder.toStdString(), backend);
    CaptureRequest capture;
    capture.hiddenStates = true;
    capture.logits = model->hasLmHead();
    return model->forward(input, capture);
}
} // namespace

class TestStoredDtypeModels : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;
    test::ScratchDir scratch_;

public:
    explicit TestStoredDtypeModels(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void storedDtypeMatchesF32_data() { test::addRoundedTwinRows(); }

    void storedDtypeMatchesF32() {
        QFETCH(QString, model);
        QFETCH(int, dtype);
        const test::GoldenCase golden = test::goldenCaseOf(model);
        QVERIFY2(!golden.folder.isEmpty(), qPrintable("no golden case for " + model));
        const io::SafetensorsFile expected(golden.tensorsPath().toStdString());
        const ModelInput input = test::goldenInput(expected);

        const auto [storedFolder, f32Folder] =
            test::writeRoundedTwins(golden.folder, io::DType(dtype), scratch_);
        // Every linear weight of the stored twin is one the load leaves in the mapped file.
        const io::Checkpoint storedCheckpoint(storedFolder.toStdString());
        int mapped = 0;
        for (const std::string& name : storedCheckpoint.names()) {
            const io::StoredMatrix matrix = storedCheckpoint.mappedMatrix(name);
            mapped += matrix.valid() && matrix.dtype == io::DType(dtype);
        }
        QVERIFY2(mapped >= 8, qPrintable(QString("%1 mapped matrices").arg(mapped)));

        const Trace stored = runOn(storedFolder, fixture_.backend(), input);
        const Trace f32 = runOn(f32Folder, fixture_.backend(), input);
        QString where;
        QVERIFY2(test::maxAbsDiff(stored.stackedProbabilities(), f32.stackedProbabilities(),
                                  &where) <= test::kGoldenTolerance,
                 qPrintable("attentions " + where));
        QCOMPARE(stored.hiddenStates.size(), f32.hiddenStates.size());
        for (std::size_t l = 0; l < f32.hiddenStates.size(); ++l)
            QVERIFY2(test::maxAbsDiff(stored.hiddenStates[l], f32.hiddenStates[l], &where) <=
                         test::kGoldenTolerance,
                     qPrintable(QString("hidden_states[%1] ").arg(l) + where));
        QVERIFY2(test::maxAbsDiff(stored.lastHiddenState, f32.lastHiddenState, &where) <=
                     test::kGoldenTolerance,
                 qPrintable("last_hidden_state " + where));
        QCOMPARE(f32.logits.empty(), model == "bert"); // BertModel: no head
        QCOMPARE(stored.logits.shape(), f32.logits.shape());
        if (!f32.logits.empty()) // an empty comparison fails: BertModel has none to compare
            QVERIFY2(test::maxAbsDiff(stored.logits, f32.logits, &where) <= test::kGoldenTolerance,
                     qPrintable("logits " + where));
        // The rounding changed the model: the pass ran on the rounded values, not the golden's.
        QVERIFY(test::differsBy(f32.lastHiddenState, expected.loadF32("last_hidden_state"), 0.0));
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestStoredDtypeModels)
#include "test_stored_dtype_models.moc"
