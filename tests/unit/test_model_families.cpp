// The family registry (core/model/model_family.h) and the config keys of the families added on
// it: Qwen3 (head_dim's own default, q/k norms, layer_types windows) and OPT (the position
// table's two extra rows, do_layer_norm_before, the projections it refuses), GPT-NeoX (rotary_pct
// of the head, use_parallel_residual), GPT-J (rotary_dim, interleaved, parallel block) and Phi-3
// (rms_norm_eps, partial_rotary_factor, sliding_window), read as their configuration_*.py files
// read them.
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

QJsonObject minimalGptNeoX() {
    return {{"model_type", "gpt_neox"}, {"vocab_size", 100},        {"hidden_size", 64},
            {"num_hidden_layers", 2},   {"num_attention_heads", 4}, {"intermediate_size", 128}};
}

QJsonObject minimalGptJ() {
    return {{"model_type", "gptj"}, {"vocab_size", 100}, {"n_embd", 32},
            {"n_layer", 2},         {"n_head", 4},       {"n_positions", 128}};
}

QJsonObject minimalPhi3() {
    return {{"model_type", "phi3"},   {"vocab_size", 100},        {"hidden_size", 32},
            {"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"intermediate_size", 64}};
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
                             "gpt_neox, gptj, phi3, gemma2, gemma3_text, headlight"));
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

    // GPTNeoXConfig: rotary_pct 0.25, rotary_emb_base 10000, use_parallel_residual true,
    // attention_bias true, gelu; rotary_ndims = int(head_size * rotary_pct).
    void gptNeoXTurnsPartOfEachHeadAndRunsInParallel() {
        const ModelSpec s = parse(minimalGptNeoX());
        QCOMPARE(s.architecture, Architecture::GptNeoX);
        QCOMPARE(s.headDim, 16);
        QCOMPARE(s.rotaryDim, 4);
        QVERIFY(!s.rotaryInterleaved);
        QCOMPARE(s.ropeTheta, 10000.0);
        QCOMPARE(s.activation, Activation::Gelu);
        QVERIFY(s.parallelResidual && s.attentionBias && s.preNorm && s.causal);
        QVERIFY(!s.tieEmbeddings);
        const ModelSpec sequential = parse(with(
            minimalGptNeoX(),
            {{"use_parallel_residual", false}, {"rotary_pct", 0.5}, {"rotary_emb_base", 500.0}}));
        QVERIFY(!sequential.parallelResidual);
        QCOMPARE(sequential.rotaryDim, 8);
        QCOMPARE(sequential.ropeTheta, 500.0);
        QCOMPARE(parseError(with(minimalGptNeoX(), {{"rotary_pct", 0.1}})),
                 QString("config.json: rotary_pct 0.100000 turns 1 of 16 features per head; "
                         "rotary needs an even count of at least 2"));
        QVERIFY(parseError(with(minimalGptNeoX(), {{"rotary_pct", 2.0}})).contains("more than 1"));
    }

    // GPTJConfig: rotary_dim 64, n_inner null = 4 · n_embd, gelu_new; the block is parallel.
    void gptJTurnsInterleavedPairsOfRotaryDim() {
        const ModelSpec defaults = parse(with(minimalGptJ(), {{"n_embd", 512}}));
        QCOMPARE(defaults.rotaryDim, 64);
        QCOMPARE(defaults.intermediate, 2048);
        const ModelSpec s = parse(with(minimalGptJ(), {{"rotary_dim", 4}}));
        QCOMPARE(s.architecture, Architecture::GptJ);
        QCOMPARE(s.headDim, 8);
        QCOMPARE(s.rotaryDim, 4);
        QVERIFY(s.rotaryInterleaved && s.parallelResidual && !s.attentionBias);
        QCOMPARE(s.activation, Activation::GeluTanh);
        QCOMPARE(parseError(with(minimalGptJ(), {{"rotary_dim", 16}})),
                 QString("config.json: rotary_dim 16 must be even and at most the head size 8"));
        QCOMPARE(parseError(with(minimalGptJ(), {{"rotary_dim", QJsonValue()}})),
                 QString("config.json: rotary_dim null (rotary over n_embd) is not supported"));
    }

    // Phi3Config: rms_norm_eps 1e-5, partial_rotary_factor 1.0, sliding_window None.
    void phi3ReadsItsRotaryFactorAndWindow() {
        const ModelSpec s = parse(minimalPhi3());
        QCOMPARE(s.architecture, Architecture::Phi3);
        QCOMPARE(s.normEps, 1e-5f);
        QCOMPARE(s.rotaryDim, 8);
        QVERIFY(!s.slidingWindow.has_value() && !s.parallelResidual && !s.attentionBias);
        const ModelSpec partial =
            parse(with(minimalPhi3(), {{"partial_rotary_factor", 0.75}, {"sliding_window", 2047}}));
        QCOMPARE(partial.rotaryDim, 6);
        QCOMPARE(partial.slidingWindow.value_or(0), 2047);
        QVERIFY(!parse(with(minimalPhi3(), {{"sliding_window", QJsonValue()}})).slidingWindow);
        QVERIFY(
            parseError(with(minimalPhi3(), {{"rope_scaling", QJsonObject{{"type", "longrope"}}}}))
                .contains("rope_scaling is not supported (type 'longrope')"));
    }
};

HEADLIGHT_TEST_APPLESS_MAIN(TestModelFamilies)
#include "test_model_families.moc"
