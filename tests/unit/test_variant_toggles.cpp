// Inference-time variant toggles on real (tiny) BERT and GPT-2 checkpoints, checked against
// identities that must hold whatever the weights: options at their neutral setting reproduce the
// vanilla pass, masks zero what they exclude, span and head mixes act as their formulas say.
#include "backend/backend.h"
#include "golden.h"
#include "model/transformer.h"
#include "variants/position_bias.h"
#include "variants/variant_spec.h"

#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstdlib>

using namespace headlight;
using variants::parseVariantSpec;

namespace {
float at(const Tensor& t, int64_t h, int64_t i, int64_t j) {
    const int64_t n = t.shape()[1];
    return t.values()[std::size_t((h * n + i) * n + j)];
}
} // namespace

class TestVariantToggles : public QObject {
    Q_OBJECT
    std::unique_ptr<Backend> backend_ = makeCpuBackend();
    std::unique_ptr<TransformerModel> bert_, gpt2_;
    const ModelInput text_{{2, 40, 41, 42, 43, 44, 45, 46, 47, 3}, {}, {}};

    Trace run(const TransformerModel& model, const char* spec, bool internals = false) {
        CaptureRequest capture;
        capture.scores = true;
        capture.internals = internals;
        return model.forward(text_, capture, parseVariantSpec(spec));
    }

private Q_SLOTS:
    void initTestCase() {
        bert_ = loadModel((test::goldenRoot() + "/bert").toStdString(), *backend_);
        gpt2_ = loadModel((test::goldenRoot() + "/gpt2").toStdString(), *backend_);
    }

    void neutralOptionsReproduceVanilla_data() {
        QTest::addColumn<QString>("spec");
        QTest::newRow("talking heads, identity") << R"({"talking_heads": {}})";
        QTest::newRow("talking heads, explicit identity")
            << R"({"talking_heads": {"logits": [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]],
                                     "weights": [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}})";
        QTest::newRow("band wider than the text")
            << R"({"mask": {"parts": [{"kind": "band", "window": 100}]}})";
        QTest::newRow("gaussian prior, flat")
            << R"({"prior": {"kind": "gaussian", "sigma": 1000000}})";
        QTest::newRow("span longer than the text") << R"({"span": {"z": [100], "ramp": 1}})";
    }
    void neutralOptionsReproduceVanilla() {
        QFETCH(QString, spec);
        for (TransformerModel* model : {bert_.get(), gpt2_.get()}) {
            const Trace vanilla = run(*model, "{}"),
                        variant = run(*model, spec.toUtf8().constData());
            QVERIFY(test::maxAbsDiff(variant.stackedProbabilities(),
                                     vanilla.stackedProbabilities()) < 1e-6);
            QVERIFY(test::maxAbsDiff(variant.lastHiddenState, vanilla.lastHiddenState) < 1e-5);
            for (std::size_t l = 0; l < vanilla.layers.size(); ++l)
                QVERIFY(test::maxAbsDiff(variant.layers[l].scores, vanilla.layers[l].scores) <
                        1e-4);
        }
    }

    void longformerZeroesWhatItExcludes() {
        const Trace t =
            run(*bert_, R"({"mask": {"preset": "longformer", "window": 1, "global": [0]}})", true);
        const Tensor& mask = t.internals.at("nominal_mask");
        for (const LayerTrace& layer : t.layers)
            for (int64_t h = 0; h < 4; ++h)
                for (int64_t i = 0; i < 10; ++i) {
                    double row = 0.0;
                    for (int64_t j = 0; j < 10; ++j) {
                        const bool allowed = std::llabs(i - j) <= 1 || i == 0 || j == 0;
                        QCOMPARE(at(mask, 0, i, j), allowed ? 1.0f : 0.0f);
                        if (!allowed) QCOMPARE(at(layer.probabilities, h, i, j), 0.0f);
                        row += at(layer.probabilities, h, i, j);
                    }
                    QVERIFY(std::abs(row - 1.0) < 1e-5);
                }
    }

    void causalMaskStillHoldsUnderASparsePattern() {
        const Trace t = run(*gpt2_, R"({"mask": {"preset": "bigbird", "block": 2}})", true);
        const Tensor& mask = t.internals.at("mask");
        for (int64_t i = 0; i < 10; ++i)
            for (int64_t j = i + 1; j < 10; ++j) {
                QCOMPARE(at(mask, 0, i, j), 0.0f);
                QCOMPARE(at(t.layers[0].probabilities, 0, i, j), 0.0f);
            }
    }

    // Span: a_ij = m_z(|i − j|) p_ij / Σ_r m_z(|i − r|) p_ir with p the vanilla weights (layer 0,
    // where the inputs are still the same).
    void adaptiveSpanRenormalisesTheRamp() {
        const Trace vanilla = run(*bert_, "{}"),
                    span = run(*bert_, R"({"span": {"z": [1, 3], "ramp": 2}})", true);
        const float z[] = {1, 3, 1, 3};
        for (int64_t h = 0; h < 4; ++h)
            for (int64_t i = 0; i < 10; ++i) {
                double sum = 0.0;
                for (int64_t j = 0; j < 10; ++j) {
                    const double m =
                        std::clamp((2.0 + z[h] - double(std::llabs(i - j))) / 2.0, 0.0, 1.0);
                    sum += m * at(vanilla.layers[0].probabilities, h, i, j);
                }
                for (int64_t j = 0; j < 10; ++j) {
                    const double m =
                        std::clamp((2.0 + z[h] - double(std::llabs(i - j))) / 2.0, 0.0, 1.0);
                    const double want = m * at(vanilla.layers[0].probabilities, h, i, j) / sum;
                    QVERIFY(std::abs(at(span.layers[0].probabilities, h, i, j) - want) < 1e-6);
                }
            }
        QCOMPARE(span.internals.at("span_mask").shape(), (std::vector<int64_t>{4, 10, 10}));
    }

    // A permutation as the weights mix moves whole maps between heads (layer 0).
    void talkingHeadsPermutationMovesMaps() {
        const Trace vanilla = run(*bert_, "{}");
        const Trace mixed = run(
            *bert_, R"({"talking_heads": {"weights": [[0,1,0,0],[0,0,1,0],[0,0,0,1],[1,0,0,0]]}})",
            true);
        for (int64_t h = 0; h < 4; ++h)
            for (int64_t i = 0; i < 10; ++i)
                for (int64_t j = 0; j < 10; ++j)
                    QVERIFY(std::abs(at(mixed.layers[0].probabilities, h, i, j) -
                                     at(vanilla.layers[0].probabilities, (h + 1) % 4, i, j)) <
                            1e-6);
        QCOMPARE(mixed.layers[0].internals.at("premix_probabilities").shape(),
                 (std::vector<int64_t>{4, 10, 10}));
    }

    void lazyformerReusesTheGroupsFirstMap() {
        const Trace t = run(*bert_, R"({"prior": {"kind": "share", "every": 2}})");
        QCOMPARE(test::maxAbsDiff(t.layers[1].probabilities, t.layers[0].probabilities), 0.0);
    }

    // RealFormer: each layer's residual stream is its own raw scores plus the previous stream.
    void residualStreamAccumulates() {
        const Trace t = run(*bert_, R"({"prior": {"kind": "residual"}})", true);
        const Tensor& first = t.layers[0].internals.at("residual_scores");
        QCOMPARE(test::maxAbsDiff(first, t.layers[0].scores), 0.0); // layer 0: nothing to add
        QVERIFY(test::maxAbsDiff(t.layers[1].internals.at("residual_scores"), t.layers[1].scores) <
                1e-4);
        QVERIFY(test::differsBy(t.layers[1].internals.at("residual_scores"), first, 1e-3));
    }

    void alibiSlopesFollowThePaper() {
        QCOMPARE(variants::alibiSlopes(8),
                 (std::vector<float>{0.5f, 0.25f, 0.125f, 0.0625f, 0.03125f, 0.015625f, 0.0078125f,
                                     0.00390625f}));
        // Not a power of two: the 4-head slopes, then every other slope of 8 heads.
        QCOMPARE(variants::alibiSlopes(6),
                 (std::vector<float>{0.25f, 0.0625f, 0.015625f, 0.00390625f, 0.5f, 0.125f}));
        const Trace t = run(*gpt2_, R"({"position": "alibi"})", true);
        const Tensor& bias = t.internals.at("bias");
        for (int64_t h = 0; h < 4; ++h)
            for (int64_t i = 0; i < 10; ++i)
                for (int64_t j = 0; j <= i; ++j)
                    QCOMPARE(at(bias, h, i, j),
                             -variants::alibiSlopes(4)[std::size_t(h)] * float(i - j));
    }

    void positionFreeVariantsRunPastTheTrainedLength() {
        const int limit = gpt2_->spec().maxPositions;
        ModelInput longer;
        longer.ids.assign(std::size_t(limit + 5), 40);
        QVERIFY_THROWS_EXCEPTION(ModelError, gpt2_->forward(longer));
        for (const char* spec : {R"({"position": "none"})", R"({"position": "sinusoidal"})",
                                 R"({"position": "alibi"})"}) {
            const Trace t = gpt2_->forward(longer, {}, parseVariantSpec(spec));
            QCOMPARE(t.lastHiddenState.shape()[0], int64_t(limit + 5));
            for (float v : t.lastHiddenState.values())
                QVERIFY(std::isfinite(v));
        }
    }

    void sinusoidalTableIsSinCos() {
        const Tensor table = variants::sinusoidalTable(3, 4);
        QCOMPARE(table.values()[0], 0.0f);                                     // sin(0)
        QCOMPARE(table.values()[1], 1.0f);                                     // cos(0)
        QVERIFY(std::abs(table.values()[4] - std::sin(1.0f)) < 1e-7);          // t = 1, i = 0
        QVERIFY(std::abs(table.values()[7] - std::cos(1.0f / 100.0f)) < 1e-7); // t = 1, i = 2
    }

    void droppingTheFfnChangesTheOutput() {
        const Trace vanilla = run(*bert_, "{}"), dropped = run(*bert_, R"({"drop_ffn": true})");
        QCOMPARE(test::maxAbsDiff(dropped.layers[0].probabilities, vanilla.layers[0].probabilities),
                 0.0);
        QVERIFY(test::differsBy(dropped.layers[1].probabilities, vanilla.layers[1].probabilities,
                                1e-4));
    }

    void earlyExitNeverOrAlwaysBracketsVanilla() {
        const Trace vanilla = run(*gpt2_, "{}");
        const Trace never =
            run(*gpt2_, R"({"early_exit": {"criterion": "entropy", "threshold": -1}})");
        QCOMPARE(test::maxAbsDiff(never.lastHiddenState, vanilla.lastHiddenState), 0.0);
        for (float l : never.internals.at("exit_layer").values())
            QCOMPARE(l, 2.0f);
        const Trace always =
            run(*gpt2_, R"({"early_exit": {"criterion": "softmax_response", "threshold": 0}})");
        for (float l : always.internals.at("exit_layer").values())
            QCOMPARE(l, 1.0f);
        QVERIFY(test::differsBy(always.lastHiddenState, vanilla.lastHiddenState, 1e-3));
        // Every token left after layer 1, so layer 2 changed nothing: both see the same attention
        // input.
        QCOMPARE(test::maxAbsDiff(always.layers[0].probabilities, vanilla.layers[0].probabilities),
                 0.0);
        const Tensor& top = always.internals.at("exit_prediction");
        for (float id : top.values())
            QVERIFY(id >= 0 && id < float(gpt2_->spec().vocabSize) && id == std::floor(id));
    }

    void saturationWorksWithoutAnLmHead() {
        const Trace t =
            run(*bert_, R"({"early_exit": {"criterion": "saturation", "threshold": 0.5}})");
        const Tensor& signal = t.internals.at("exit_signal");
        QCOMPARE(signal.shape(), (std::vector<int64_t>{2, 10}));
        for (int64_t token = 0; token < 10; ++token) {
            const float cosine = signal.values()[std::size_t(token)];
            QVERIFY(cosine >= -1.0f && cosine <= 1.0f);
            QCOMPARE(t.internals.at("exit_layer").values()[std::size_t(token)],
                     cosine >= 0.5f ? 1.0f : 2.0f);
        }
    }

    // Transformer-XL with a memory holding every earlier token sees what causal attention sees.
    void recurrenceWithAFullMemoryIsVanilla() {
        const Trace vanilla = run(*gpt2_, "{}");
        const Trace segmented = run(*gpt2_, R"({"recurrence": {"segment": 3, "memory": 9}})", true);
        QVERIFY(test::maxAbsDiff(segmented.stackedProbabilities(), vanilla.stackedProbabilities()) <
                1e-6);
        QVERIFY(test::maxAbsDiff(segmented.lastHiddenState, vanilla.lastHiddenState) < 1e-5);
        const Tensor& segment = segmented.internals.at("segment");
        const std::vector<float> expected{0, 0, 0, 1, 1, 1, 2, 2, 2, 3};
        QVERIFY(std::equal(segment.values().begin(), segment.values().end(), expected.begin(),
                           expected.end()));
    }

    // Query i of segment s = ⌊i / 2⌋ reads the memory (the 2 tokens before its segment) and its
    // own segment up to itself: nothing older, nothing later.
    void recurrenceForgetsWhatLeftTheMemory() {
        const Trace vanilla = run(*gpt2_, "{}");
        const Trace segmented = run(*gpt2_, R"({"recurrence": {"segment": 2, "memory": 2}})");
        for (const LayerTrace& layer : segmented.layers)
            for (int64_t h = 0; h < 4; ++h)
                for (int64_t i = 0; i < 10; ++i) {
                    const int64_t oldest = std::max<int64_t>(0, i / 2 * 2 - 2);
                    float sum = 0;
                    for (int64_t j = 0; j < 10; ++j) {
                        const float p = at(layer.probabilities, h, i, j);
                        sum += p;
                        if (j < oldest || j > i)
                            QCOMPARE(p, 0.0f);
                        else
                            QVERIFY(p > 0);
                    }
                    QVERIFY(std::abs(sum - 1) < 1e-5);
                }
        QVERIFY(test::differsBy(segmented.lastHiddenState, vanilla.lastHiddenState, 1e-3));
    }

    void refusesWhatCannotWork() {
        try {
            run(*bert_, R"({"early_exit": {"criterion": "entropy", "threshold": 1}})");
            QFAIL("expected VariantError");
        } catch (const variants::VariantError& e) {
            QVERIFY2(QString(e.what()).contains("tied LM head, which bert does not have here"),
                     e.what());
        }
        try {
            run(*gpt2_, R"({"attention": {"kernel": "linformer"}})");
            QFAIL("expected VariantError");
        } catch (const variants::VariantError& e) {
            QVERIFY2(QString(e.what()).contains(
                         "runs on encoders (BERT family) only, and gpt2 is causal"),
                     e.what());
        }
        try {
            run(*bert_, R"({"talking_heads": {"logits": [[1, 0], [0, 1]]}})");
            QFAIL("expected VariantError");
        } catch (const variants::VariantError& e) {
            QCOMPARE(QString(e.what()),
                     QString("talking heads: the logits mix is 2 × 2 but this model has 4 heads"));
        }
        const std::pair<TransformerModel*, const char*> refused[] = {
            {bert_.get(), R"({"recurrence": {"segment": 4}})"},
            {gpt2_.get(), R"({"position": "xl"})"},
            {gpt2_.get(), R"({"recurrence": {"segment": 4}, "mask": {"preset": "star"}})"},
        };
        const char* reasons[] = {
            "is a language-model method (each segment reads earlier ones only), and bert",
            "Transformer-XL relative positions need the W_R, u and v",
            "it does not combine with a sparse mask"};
        for (std::size_t n = 0; n < std::size(refused); ++n) {
            try {
                run(*refused[n].first, refused[n].second);
                QFAIL(refused[n].second);
            } catch (const variants::VariantError& e) {
                QVERIFY2(QString(e.what()).contains(reasons[n]), e.what());
            }
        }
    }
};

HEADLIGHT_TEST_APPLESS_MAIN(TestVariantToggles)
#include "test_variant_toggles.moc"
