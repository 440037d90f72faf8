// The forward pass on each backend of every golden checkpoint (BERT, BERT-MLM in f16, RoBERTa,
// DistilBERT, GPT-2, sharded bf16 GPT-2, Llama, Qwen2, Mistral, Qwen3, OPT, GPT-NeoX, GPT-J,
// Phi-3, Gemma 2, Gemma 3) against the float64 NumPy reference of tools/golden/models_ref.py
// (written by tools/golden/make_goldens.py; docs/golden-references.md): attention probabilities,
// every hidden state, the last hidden state and, where the golden has them (Gemma), the logits
// within 1e-4 (an untied head's logits against that head applied to the golden's last hidden
// state), and the entropy and adjacent-layer JSD of the analysis library on the tokens the
// golden's attention mask keeps; on Vulkan with no validation error. Every shape, count and mask
// the comparison uses comes from the golden file, never from the engine's output, so an engine
// that returns less than the reference fails. The Vulkan backend's node-by-node parity with the CPU
// is tests/vulkan/test_vulkan_models.cpp.
#include "analysis/divergence.h"
#include "backend_fixture.h"
#include "golden.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "model/transformer.h"

#include <QTest>

using namespace headlight;

namespace {
// The logits of an untied LM head stored beside the base model (lm_head.weight with its bias, as
// GPT-J keeps one, or GPT-NeoX's embed_out.weight), computed in double precision from the golden's
// last hidden state; empty for a tied or absent head.
Tensor untiedHeadOnGolden(const QString& folder, const io::SafetensorsFile& golden) {
    const io::Checkpoint checkpoint(folder.toStdString());
    const char* name = checkpoint.contains("lm_head.weight")     ? "lm_head.weight"
                       : checkpoint.contains("embed_out.weight") ? "embed_out.weight"
                                                                 : nullptr;
    if (!name) return {};
    const Tensor weight = checkpoint.loadF32(name);
    const Tensor bias =
        checkpoint.contains("lm_head.bias") ? checkpoint.loadF32("lm_head.bias") : Tensor();
    const Tensor last = golden.loadF32("last_hidden_state");
    const int64_t tokens = last.dim(0), hidden = last.dim(1), vocab = weight.dim(0);
    Tensor logits({tokens, vocab});
    for (int64_t t = 0; t < tokens; ++t)
        for (int64_t v = 0; v < vocab; ++v) {
            double sum = bias.empty() ? 0.0 : double(bias.data()[v]);
            for (int64_t d = 0; d < hidden; ++d)
                sum += double(last.data()[t * hidden + d]) * double(weight.data()[v * hidden + d]);
            logits.data()[t * vocab + v] = float(sum);
        }
    return logits;
}
} // namespace

class TestGoldenModels : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

public:
    explicit TestGoldenModels(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void forwardMatchesNumpyReference_data() {
        QTest::addColumn<int>("index");
        const auto cases = test::goldenCases();
        QVERIFY2(cases.size() >= 20, "expected the golden cases of tools/golden/make_goldens.py");
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(qPrintable(cases[i].model + "/" + cases[i].name())) << int(i);
    }

    void forwardMatchesNumpyReference() {
        QFETCH(int, index);
        const test::GoldenCase golden = test::goldenCases()[std::size_t(index)];
        const auto model = loadModel(golden.folder.toStdString(), fixture_.backend());
        const io::SafetensorsFile expected(golden.tensorsPath().toStdString());

        const ModelInput input = test::goldenInput(expected);
        CaptureRequest capture;
        capture.hiddenStates = true;
        // Gemma's goldens hold the (soft-capped) logits; an untied head elsewhere is checked on
        // the golden's own last hidden state.
        const Tensor headLogits = untiedHeadOnGolden(golden.folder, expected);
        capture.logits = expected.contains("logits") || !headLogits.empty();
        const Trace trace = model->forward(input, capture);

        QString where;
        const Tensor attentions = trace.stackedProbabilities();
        QVERIFY2(test::maxAbsDiff(attentions, expected.loadF32("attentions"), &where) <=
                     test::goldenTolerance(golden.model),
                 qPrintable("attentions " + where));
        QVERIFY2(test::maxAbsDiff(trace.lastHiddenState, expected.loadF32("last_hidden_state"),
                                  &where) <= test::goldenTolerance(golden.model),
                 qPrintable("last_hidden_state " + where));
        if (capture.logits)
            QVERIFY2(test::maxAbsDiff(trace.logits,
                                      headLogits.empty() ? expected.loadF32("logits") : headLogits,
                                      &where) <= test::goldenTolerance(golden.model),
                     qPrintable("logits " + where));
        // hidden_states [L + 1, T, D]: each of the engine's states against its slice of the
        // golden, cut to the golden's own [T, D].
        const Tensor hidden = expected.loadF32("hidden_states");
        QCOMPARE(hidden.rank(), std::size_t(3));
        QCOMPARE(int64_t(trace.hiddenStates.size()), hidden.dim(0));
        const std::vector<int64_t> stateShape{hidden.dim(1), hidden.dim(2)};
        const auto stateSize = std::size_t(hidden.dim(1) * hidden.dim(2));
        for (std::size_t l = 0; l < trace.hiddenStates.size(); ++l) {
            const Tensor theirs(stateShape,
                                std::vector<float>(hidden.values().begin() + l * stateSize,
                                                   hidden.values().begin() + (l + 1) * stateSize));
            QVERIFY2(test::maxAbsDiff(trace.hiddenStates[l], theirs, &where) <=
                         test::goldenTolerance(golden.model),
                     qPrintable(QString("hidden_states[%1] ").arg(l) + where));
        }

        // Analysis: compared on the query tokens the golden's attention mask keeps (padded
        // queries are excluded from statistics); the analysis reads the same mask.
        const std::vector<int64_t> goldenMask = expected.loadI64("attention_mask");
        analysis::TokenMask valid;
        for (const int64_t m : goldenMask)
            valid.push_back(m != 0 ? 1 : 0);
        const auto tokens = std::size_t(goldenMask.size());
        auto validQuery = [&](std::size_t i) { return goldenMask[i % tokens] != 0; };
        QVERIFY2(test::maxAbsDiff(analysis::attentionEntropy(attentions, valid),
                                  expected.loadF32("entropy"), validQuery,
                                  &where) <= test::goldenTolerance(golden.model),
                 qPrintable("entropy " + where));
        QVERIFY2(test::maxAbsDiff(analysis::adjacentLayerJsd(attentions, valid),
                                  expected.loadF32("jsd_adjacent"), validQuery,
                                  &where) <= test::goldenTolerance(golden.model),
                 qPrintable("jsd_adjacent " + where));
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestGoldenModels)
#include "test_golden_models.moc"
