// Logits through every kind of LM head, the logit lens and the variant effect on each backend
// against tools/golden/make_output_goldens.py (float64 PyTorch from the Hugging Face heads:
// GPT-2's tied wte, Llama's lm_head.weight, BertForMaskedLM's cls.predictions): the logits, and
// per hidden state and position the lens's top token, probability, entropy and final-token
// rank; the lens's last row equal to the model's own logits; for a variant against exact
// attention the KL per position, the top-1 tokens, the top-5 flips, the per-head JSD and the last
// hidden state's relative change, within 1e-4. A checkpoint without a head says why.
#include "analysis/logit_lens.h"
#include "analysis/output_effect.h"
#include "backend_fixture.h"
#include "golden.h"
#include "io/checkpoint.h"
#include "variants/variant_spec.h"

#include <QTest>

using namespace headlight;

namespace {
Tensor floats(const std::vector<float>& values, const Tensor& like) {
    return Tensor(like.shape(), values);
}

template <typename Int> std::vector<int64_t> ints(const std::vector<Int>& values) {
    return {values.begin(), values.end()};
}

// logits [T, V] = hidden [T, D] · weightᵀ [D, V], in double precision.
Tensor headProduct(const Tensor& hidden, const Tensor& weight) {
    const int64_t tokens = hidden.dim(0), width = hidden.dim(1), vocab = weight.dim(0);
    Tensor logits({tokens, vocab});
    for (int64_t t = 0; t < tokens; ++t)
        for (int64_t v = 0; v < vocab; ++v) {
            double sum = 0.0;
            for (int64_t d = 0; d < width; ++d)
                sum += double(hidden.data()[t * width + d]) * double(weight.data()[v * width + d]);
            logits.data()[t * vocab + v] = float(sum);
        }
    return logits;
}

Trace runPass(const TransformerModel& model, const ModelInput& input,
              const variants::VariantSpec& spec) {
    CaptureRequest capture;
    capture.hiddenStates = true;
    capture.logits = true;
    return model.forward(input, capture, spec);
}
} // namespace

class TestOutputGoldens : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

public:
    explicit TestOutputGoldens(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void lensMatchesPyTorch_data() {
        QTest::addColumn<int>("index");
        const auto cases = test::goldenSetCases("output");
        QVERIFY2(cases.size() >= 4, "expected the cases of tools/golden/make_output_goldens.py");
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(qPrintable(cases[i].name())) << int(i);
    }

    void lensMatchesPyTorch() {
        QFETCH(int, index);
        const test::GoldenSetCase golden = test::goldenSetCases("output")[std::size_t(index)];
        const auto model = loadModel(golden.folder(), fixture_.backend());
        const io::SafetensorsFile expected(
            (QStringLiteral(HEADLIGHT_TEST_DATA "/output/") + golden.name() + ".safetensors")
                .toStdString());
        const Trace trace = runPass(*model, golden.input(), {});
        QString where;
        QVERIFY2(test::maxAbsDiff(trace.logits, expected.loadF32("logits"), &where) <=
                     test::kGoldenTolerance,
                 qPrintable("logits " + where));

        const analysis::LogitLens lens = analysis::logitLens(*model, trace);
        const Tensor probability = expected.loadF32("lens_probability");
        QCOMPARE(int64_t(lens.rows), probability.dim(0));
        QVERIFY(ints(lens.top) == expected.loadI64("lens_top"));
        QVERIFY(ints(lens.finalRank) == expected.loadI64("lens_rank"));
        QVERIFY2(test::maxAbsDiff(floats(lens.probability, probability), probability, &where) <=
                     test::kGoldenTolerance,
                 qPrintable("lens probability " + where));
        QVERIFY2(test::maxAbsDiff(floats(lens.entropy, probability),
                                  expected.loadF32("lens_entropy"),
                                  &where) <= test::kGoldenTolerance,
                 qPrintable("lens entropy " + where));
    }

    // Exact for the last layer: the lens's own path (lensLogits: final norm where the model has
    // one, then the head) on the last layer's output is the model's logits. BERT-MLM (post-LN, no
    // final norm) reports that output itself as its last hidden state, so the two paths meet; and
    // the lens's last row then names the logits' top token with rank 0.
    void lensLastRowIsTheModelsLogits() {
        const auto model =
            loadModel((test::goldenRoot() + "/bert_mlm").toStdString(), fixture_.backend());
        const test::GoldenSetCase golden = test::goldenSetCases("output").back();
        QCOMPARE(golden.json["model"].toString(), QString("bert_mlm"));
        const Trace trace = runPass(*model, golden.input(), {});
        QString where;
        QVERIFY2(test::maxAbsDiff(model->lensLogits(trace.hiddenStates.back()), trace.logits,
                                  &where) <= 1e-5,
                 qPrintable(where));
        const analysis::LogitLens lens = analysis::logitLens(*model, trace);
        const int64_t vocab = trace.logits.dim(1);
        for (int t = 0; t < lens.tokens; ++t) {
            const auto d = analysis::distributionOf(trace.logits.data() + t * vocab, vocab);
            QCOMPARE(lens.top[lens.at(lens.rows - 1, t)], d.top);
            QCOMPARE(lens.finalRank[lens.at(lens.rows - 1, t)], 0);
            QVERIFY(lens.settledRow(t) <= lens.rows - 1);
        }
    }

    void effectMatchesPyTorch_data() {
        QTest::addColumn<int>("index");
        const auto cases = test::goldenSetCases("output");
        for (std::size_t i = 0; i < cases.size(); ++i)
            if (cases[i].json["spec"].isObject())
                QTest::newRow(qPrintable(cases[i].name())) << int(i);
    }

    void effectMatchesPyTorch() {
        QFETCH(int, index);
        const test::GoldenSetCase golden = test::goldenSetCases("output")[std::size_t(index)];
        const auto model = loadModel(golden.folder(), fixture_.backend());
        const io::SafetensorsFile expected(
            (QStringLiteral(HEADLIGHT_TEST_DATA "/output/") + golden.name() + ".safetensors")
                .toStdString());
        const variants::VariantSpec spec = variants::parseVariantSpec(
            QJsonDocument(golden.json["spec"].toObject()).toJson().toStdString());
        const ModelInput input = golden.input();
        const analysis::OutputEffect effect = analysis::outputEffect(
            runPass(*model, input, {}), runPass(*model, input, spec), golden.json["k"].toInt());
        const Tensor kl = expected.loadF32("kl");
        QString where;
        QVERIFY2(test::maxAbsDiff(floats(effect.kl, kl), kl, &where) <= test::kGoldenTolerance,
                 qPrintable("KL " + where));
        QVERIFY(ints(effect.exactTop) == expected.loadI64("exact_top"));
        QVERIFY(ints(effect.variantTop) == expected.loadI64("variant_top"));
        QVERIFY(ints(effect.topKFlips) == expected.loadI64("topk_flips"));
        const Tensor jsd = expected.loadF32("head_jsd");
        QVERIFY2(test::maxAbsDiff(Tensor(jsd.shape(), effect.headJsd), jsd, &where) <=
                     test::kGoldenTolerance,
                 qPrintable("head JSD " + where));
        QVERIFY2(std::abs(effect.hiddenChange.back() -
                          expected.loadF32("hidden_change_last").values()[0]) <=
                     test::kGoldenTolerance,
                 "relative change of the last hidden state");
        QVERIFY(effect.meanKl >
                0.01); // the variant changes the output: the comparison is not vacuous
    }

    // Llama's untied head is lm_head.weight read from the file: the model's logits equal the
    // last hidden state times lm_head.weightᵀ, and not the product with the embedding a tied head
    // would use (the two matrices differ, so the check tells them apart).
    void untiedHeadIsLmHeadWeight() {
        const QString folder = test::goldenRoot() + "/llama";
        const auto model = loadModel(folder.toStdString(), fixture_.backend());
        QVERIFY(model->hasLmHead());
        const test::GoldenCase golden = test::goldenCaseOf("llama");
        const io::SafetensorsFile expected(golden.tensorsPath().toStdString());
        CaptureRequest logits;
        logits.logits = true;
        const Trace trace = model->forward(test::goldenInput(expected), logits);
        const Tensor goldenLast = expected.loadF32("last_hidden_state");
        QString where;
        QVERIFY2(test::maxAbsDiff(trace.lastHiddenState, goldenLast, &where) <=
                     test::kGoldenTolerance,
                 qPrintable("last_hidden_state " + where));
        const io::Checkpoint checkpoint(folder.toStdString());
        const Tensor head = checkpoint.loadF32("lm_head.weight");
        const Tensor embedding = checkpoint.loadF32("model.embed_tokens.weight");
        QCOMPARE(trace.logits.shape(), (std::vector<int64_t>{goldenLast.dim(0), head.dim(0)}));
        QVERIFY2(test::maxAbsDiff(trace.logits, headProduct(trace.lastHiddenState, head), &where) <=
                     test::kGoldenTolerance,
                 qPrintable("logits against lm_head.weight: " + where));
        QVERIFY(test::maxAbsDiff(trace.logits, headProduct(trace.lastHiddenState, embedding)) >
                0.01);
        const auto bert =
            loadModel((test::goldenRoot() + "/bert").toStdString(), fixture_.backend());
        QVERIFY(!bert->hasLmHead());
        QCOMPARE(QString::fromStdString(bert->lmHeadAbsence()),
                 QString("this checkpoint has no masked-LM head (cls.predictions.*): it is a base "
                         "model, not BertForMaskedLM"));
        CaptureRequest capture;
        capture.logits = true;
        try {
            bert->forward({{2, 10, 3}, {}, {}}, capture);
            QFAIL("a model without an LM head gave logits");
        } catch (const ModelError& error) {
            QCOMPARE(QString(error.what()), QString::fromStdString(bert->lmHeadAbsence()));
        }
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestOutputGoldens)
#include "test_output_goldens.moc"
