// Gemma 2 and Gemma 3 text (core/model/families/gemma.cpp): their configs read as
// configuration_gemma2.py and configuration_gemma3.py read them (defaults, null soft-caps,
// windowed and global layers from layer_types or the fixed patterns, Transformers 5's
// per-layer-kind rope_parameters), the refusals (the multimodal gemma3 config, bidirectional
// attention, variants that change the attention or the depth loop), `headlight info` on the
// golden checkpoints, and the final logit soft-capping bounding the logits the engine returns.
#include "backend/backend.h"
#include "cli_runner.h"
#include "error_of.h"
#include "golden.h"
#include "model/model_family.h"
#include "model/transformer.h"
#include "variants/variant_spec.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <cmath>

using namespace headlight;

namespace {

ModelSpec gemmaSpec(const QJsonObject& json) {
    return parseModelConfig(QJsonDocument(json).toJson(QJsonDocument::Compact).toStdString());
}

QString gemmaError(const QJsonObject& json) {
    return test::errorOf<io::CheckpointError>([&] { gemmaSpec(json); });
}

QJsonObject gemmaWith(QJsonObject json, const QJsonObject& changes) {
    for (auto it = changes.begin(); it != changes.end(); ++it)
        json[it.key()] = it.value();
    return json;
}

QJsonObject minimalGemma(const char* modelType) {
    return {{"model_type", modelType},  {"vocab_size", 100},
            {"hidden_size", 32},        {"num_hidden_layers", 6},
            {"num_attention_heads", 4}, {"intermediate_size", 64},
            {"num_key_value_heads", 2}, {"head_dim", 16}};
}

std::vector<bool> globalPattern(std::initializer_list<int> globals, int layers) {
    std::vector<bool> pattern(std::size_t(layers), false);
    for (int layer : globals)
        pattern[std::size_t(layer)] = true;
    return pattern;
}

// The "key: value" lines of `headlight info --model FOLDER`.
QMap<QString, QString> gemmaInfo(const QString& folder) {
    const test::CliResult run = test::runHeadlight({"info", "--model", folder});
    if (run.exitCode != 0) qWarning("%s", qPrintable(run.err));
    QMap<QString, QString> fields;
    for (const QString& line : run.out.split('\n', Qt::SkipEmptyParts)) {
        const qsizetype colon = line.indexOf(':');
        fields.insert(line.left(colon), line.mid(colon + 1).trimmed());
    }
    return fields;
}
} // namespace

class TestGemmaFamily : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void gemma2ReadsItsDefaults() {
        const ModelSpec s = gemmaSpec(minimalGemma("gemma2"));
        QCOMPARE(s.architecture, Architecture::Gemma2);
        QCOMPARE(s.activation, Activation::GeluTanh);
        QCOMPARE(s.embeddingScale, float(std::sqrt(32.0)));
        QCOMPARE(s.attentionScale, 1.0f / 16.0f); // query_pre_attn_scalar 256
        QCOMPARE(s.attentionSoftcap, 50.0f);
        QCOMPARE(s.finalSoftcap, 30.0f);
        QVERIFY(s.sandwichNorms && s.preNorm && s.causal && s.tieEmbeddings && !s.qkNorm);
        QCOMPARE(s.padTokenId, 0);
        QCOMPARE(s.slidingWindow, std::optional<int>(4096));
        QCOMPARE(s.globalLayers, globalPattern({1, 3, 5}, 6)); // even layers windowed
        QCOMPARE(s.localRopeTheta, 0.0);
        const ModelSpec uncapped = gemmaSpec(
            gemmaWith(minimalGemma("gemma2"), {{"attn_logit_softcapping", QJsonValue()},
                                               {"final_logit_softcapping", QJsonValue()}}));
        QCOMPARE(uncapped.attentionSoftcap, 0.0f);
        QCOMPARE(uncapped.finalSoftcap, 0.0f);
        QCOMPARE(gemmaSpec(gemmaWith(minimalGemma("gemma2"), {{"query_pre_attn_scalar", 144}}))
                     .attentionScale,
                 1.0f / 12.0f);
    }

    void gemma3ReadsItsDefaultsAndLayerPattern() {
        const ModelSpec s = gemmaSpec(gemmaWith(minimalGemma("gemma3_text"),
                                                {{"num_hidden_layers", 12}, {"rope_theta", 1e6}}));
        QCOMPARE(s.architecture, Architecture::Gemma3);
        QVERIFY(s.qkNorm && s.sandwichNorms);
        QCOMPARE(s.attentionSoftcap, 0.0f);
        QCOMPARE(s.finalSoftcap, 0.0f);
        QCOMPARE(s.globalLayers, globalPattern({5, 11}, 12)); // sliding_window_pattern 6
        QCOMPARE(s.ropeTheta, 1e6);
        QCOMPARE(s.localRopeTheta, 10000.0);
        const ModelSpec three =
            gemmaSpec(gemmaWith(minimalGemma("gemma3_text"), {{"sliding_window_pattern", 3}}));
        QCOMPARE(three.globalLayers, globalPattern({2, 5}, 6));
        const QJsonArray types{"full_attention",    "sliding_attention", "sliding_attention",
                               "sliding_attention", "full_attention",    "sliding_attention"};
        QCOMPARE(gemmaSpec(gemmaWith(minimalGemma("gemma3_text"), {{"layer_types", types}}))
                     .globalLayers,
                 globalPattern({0, 4}, 6));
        QCOMPARE(gemmaSpec(gemmaWith(minimalGemma("gemma3_text"),
                                     {{"architectures", QJsonArray{"Gemma3ForCausalLM"}},
                                      {"model_type", QJsonValue()}}))
                     .architecture,
                 Architecture::Gemma3);
    }

    void gemma3ReadsRopeParametersPerLayerKind() {
        const QJsonObject rope{
            {"full_attention", QJsonObject{{"rope_type", "default"}, {"rope_theta", 1e6}}},
            {"sliding_attention", QJsonObject{{"rope_type", "default"}, {"rope_theta", 1e4}}}};
        const ModelSpec s =
            gemmaSpec(gemmaWith(minimalGemma("gemma3_text"), {{"rope_parameters", rope}}));
        QCOMPARE(s.ropeTheta, 1e6);
        QCOMPARE(s.localRopeTheta, 1e4);
        QJsonObject scaled = rope;
        scaled["full_attention"] = QJsonObject{{"rope_type", "linear"}, {"factor", 8.0}};
        QCOMPARE(gemmaError(gemmaWith(minimalGemma("gemma3_text"), {{"rope_parameters", scaled}})),
                 QString("config.json: rope_parameters full_attention type 'linear' is not "
                         "supported (rope scaling); only plain RoPE is implemented"));
    }

    void refusesWhatItCannotRun() {
        QCOMPARE(gemmaError(minimalGemma("gemma3")),
                 QString("config.json: model_type 'gemma3' is the multimodal Gemma 3 "
                         "(Gemma3ForConditionalGeneration, a vision tower beside the text "
                         "model); Headlight runs Gemma 3's text-only checkpoints, model_type "
                         "'gemma3_text' (Gemma3ForCausalLM)"));
        QCOMPARE(gemmaError(gemmaWith(minimalGemma("gemma3_text"),
                                      {{"use_bidirectional_attention", true}})),
                 QString("config.json: use_bidirectional_attention (EmbeddingGemma) is not "
                         "supported"));
        QCOMPARE(gemmaError(gemmaWith(minimalGemma("gemma2"),
                                      {{"layer_types", QJsonArray{"full_attention"}}})),
                 QString("config.json: layer_types must list one kind per layer (6)"));
        QCOMPARE(gemmaError(gemmaWith(minimalGemma("gemma2"), {{"attn_logit_softcapping", -1}})),
                 QString("config.json: attn_logit_softcapping must be a positive number, not -1"));
    }

    void infoNamesTheFamilyAndItsWiring() {
        const auto gemma2 = gemmaInfo(test::goldenRoot() + "/gemma2");
        QCOMPARE(gemma2["model_type"], QString("gemma2"));
        QCOMPARE(gemma2["family"], QString("Gemma 2"));
        QCOMPARE(gemma2["head_dim"], QString("16"));
        QCOMPARE(gemma2["norms"], QString("RMSNorm before and after each sub-layer, scale 1 + w, "
                                          "eps 1e-06"));
        QCOMPARE(gemma2["attention"], QString("window 4 on 2 of 4 layers, scale 0.223607, scores "
                                              "soft-capped at 5, logits soft-capped at 3"));
        const auto gemma3 = gemmaInfo(test::goldenRoot() + "/gemma3");
        QCOMPARE(gemma3["model_type"], QString("gemma3_text"));
        QCOMPARE(gemma3["family"], QString("Gemma 3"));
        QCOMPARE(gemma3["positions"], QString("rotary (theta 1000000, windowed layers 10000)"));
        QCOMPARE(gemma3["attention"], QString("window 4 on 2 of 3 layers, scale 0.223607"));
    }

    // The golden logits (tests/backends/test_golden_models) are capped at 3; here every logit of
    // a longer input stays inside (−3, 3) and the largest comes close to the cap.
    void finalSoftcapBoundsTheLogits() {
        const auto backend = makeCpuBackend();
        const auto model = loadModel((test::goldenRoot() + "/gemma2").toStdString(), *backend);
        ModelInput input;
        for (int32_t id = 3; id < 60; ++id)
            input.ids.push_back(id);
        CaptureRequest capture;
        capture.logits = true;
        const Trace trace = model->forward(input, capture);
        float largest = 0.0f;
        for (float logit : trace.logits.values())
            largest = std::max(largest, std::abs(logit));
        QVERIFY(largest < 3.0f);
        QVERIFY(largest > 2.5f);
    }

    void refusesVariantsThatChangeTheAttention() {
        const auto backend = makeCpuBackend();
        const auto model = loadModel((test::goldenRoot() + "/gemma3").toStdString(), *backend);
        ModelInput input;
        input.ids = {5, 6, 7, 8};
        const QString error = test::errorOf<variants::VariantError>([&] {
            model->forward(input, {},
                           variants::parseVariantSpec(R"({"mask": {"preset": "blockwise"}})"));
        });
        QCOMPARE(error, QString("Gemma's sandwich norms, per-layer windows and soft-capped "
                                "attention run in the plain stack with standard attention only; "
                                "this variant changes the depth loop or the attention"));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestGemmaFamily)
#include "test_gemma_family.moc"
