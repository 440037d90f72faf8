// The family registry (core/model/model_family.h) and the config keys of the families added on
// it: Qwen3 (head_dim's own default, q/k norms, layer_types windows) and OPT (the position
// table's two extra rows, do_layer_norm_before, the projections it refuses), read as
// configuration_qwen3.py and configuration_opt.py read them.
#include "error_of.h"
#include "io/safetensors.h"
#include "model/model_family.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <set>

using namespace headlight;

namespace {

ModelSpec parse(const QJsonObject& json) {
    return parseModelConfig(QJsonDocument(json).toJson(QJsonDocument::Compact).toStdString());
}

QString parseError(const QJsonObject& json) {
    return test::errorOf<io::CheckpointError>([&] { parse(json); });
}

QJsonObject with(QJsonObject json, const QJsonObject& changes) {
    for (auto it = changes.begin(); it != changes.end(); ++it)
        json[it.key()] = it.value();
    return json;
}

QJsonObject minimalQwen3() {
    return {{"model_type", "qwen3"},  {"vocab_size", 100},        {"hidden_size", 32},
            {"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"intermediate_size", 64}};
}

QJsonObject minimalOpt() {
    return {{"model_type", "opt"},           {"vocab_size", 100},        {"hidden_size", 32},
            {"num_hidden_layers", 2},        {"num_attention_heads", 4}, {"ffn_dim", 64},
            {"max_position_embeddings", 128}};
}
} // namespace

class TestModelFamilies : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyFamilyHasItsOwnModelTypeAndArchitecture() {
        std::set<std::string> types;
        std::set<Architecture> architectures;
        for (const ModelFamily* family : modelFamilies()) {
            QVERIFY(types.insert(family->modelType).second);
            QVERIFY(architectures.insert(family->architecture).second);
            QCOMPARE(&familyOf(family->architecture), family);
            QCOMPARE(std::string(architectureName(family->architecture)),
                     std::string(family->modelType));
        }
        QCOMPARE(supportedModelTypes(),
                 std::string("bert, roberta, distilbert, gpt2, llama, qwen2, mistral, qwen3, opt, "
                             "gemma2, gemma3_text, headlight"));
    }

    void qwen3ReadsItsOwnHeadDimDefaultAndNormsQueriesAndKeys() {
        const ModelSpec s = parse(minimalQwen3());
        QCOMPARE(s.architecture, Architecture::Qwen3);
        QCOMPARE(s.headDim, 128); // configuration_qwen3.py: head_dim = 128, not hidden / heads
        QVERIFY(s.qkNorm);
        QVERIFY(s.preNorm);
        QCOMPARE(s.positions, PositionsKind::Rotary);
        QVERIFY(!s.attentionBias);
        QVERIFY(parse(with(minimalQwen3(), {{"attention_bias", true}})).attentionBias);
        QCOMPARE(parse(with(minimalQwen3(), {{"head_dim", 16}})).headDim, 16);
        QCOMPARE(parse(with(minimalQwen3(), {{"architectures", QJsonArray{"Qwen3ForCausalLM"}},
                                             {"model_type", QJsonValue()}}))
                     .architecture,
                 Architecture::Qwen3);
    }

    void qwen3WindowFollowsLayerTypes() {
        const QJsonObject windowed =
            with(minimalQwen3(), {{"use_sliding_window", true}, {"sliding_window", 8}});
        const QJsonArray allSliding{"sliding_attention", "sliding_attention"};
        QCOMPARE(parse(with(windowed, {{"layer_types", allSliding}})).slidingWindow,
                 std::optional<int>(8));
        QVERIFY(!parse(with(minimalQwen3(), {{"sliding_window", 8}, {"layer_types", allSliding}}))
                     .slidingWindow); // use_sliding_window false: HF drops the window
        QCOMPARE(parseError(with(windowed, {{"layer_types",
                                             QJsonArray{"full_attention", "sliding_attention"}}})),
                 QString("config.json: use_sliding_window with layer_types marking 1 of 2 layers "
                         "sliding mixes windowed and full attention layers, which is not "
                         "supported"));
        QCOMPARE(parseError(with(windowed, {{"layer_types", QJsonArray{"chunked_attention"}}})),
                 QString("config.json: layer_types must list one kind per layer (2)"));
    }

    void optPositionTableHasTwoExtraRows() {
        const ModelSpec s = parse(minimalOpt());
        QCOMPARE(s.architecture, Architecture::Opt);
        QCOMPARE(s.maxPositions, 130);
        QCOMPARE(s.positionOffset, 2);
        QCOMPARE(s.activation, Activation::Relu);
        QCOMPARE(s.normEps, 1e-5f);
        QCOMPARE(s.padTokenId, 1);
        QVERIFY(s.preNorm && s.causal && s.attentionBias && s.tieEmbeddings);
        QVERIFY(!parse(with(minimalOpt(), {{"do_layer_norm_before", false}})).preNorm);
        QVERIFY(!parse(with(minimalOpt(), {{"enable_bias", false}})).attentionBias);
    }

    void optRefusesWhatItCannotRun() {
        QCOMPARE(parseError(with(minimalOpt(), {{"word_embed_proj_dim", 16}})),
                 QString("config.json: word_embed_proj_dim 16 differs from hidden_size 32 "
                         "(project_in / project_out, as in opt-350m), which is not supported"));
        QCOMPARE(parseError(with(minimalOpt(), {{"layer_norm_elementwise_affine", false}})),
                 QString("config.json: layer_norm_elementwise_affine false (LayerNorms without "
                         "weights) is not supported"));
        QCOMPARE(parseError(with(minimalOpt(), {{"ffn_dim", QJsonValue()}})),
                 QString("config.json: missing 'ffn_dim'"));
    }
};

HEADLIGHT_TEST_APPLESS_MAIN(TestModelFamilies)
#include "test_model_families.moc"
