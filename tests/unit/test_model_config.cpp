// config.json → ModelSpec: real configs of every supported architecture, HF's defaults when keys
// are absent, detection from architectures[0], and refusals that name the key at fault.
#include "io/safetensors.h"
#include "model/model_spec.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace headlight;

Q_DECLARE_METATYPE(headlight::Architecture)

namespace {
template <typename Action> QString errorOf(Action&& action) {
    try {
        action();
    } catch (const io::CheckpointError& error) {
        return QString::fromStdString(error.what());
    } catch (const std::exception& error) {
        return "wrong exception type: " + QString::fromStdString(error.what());
    }
    return "no error";
}

std::string sampleText(const char* name) {
    QFile file(QString(HEADLIGHT_TEST_DATA) + "/configs/" + name);
    if (!file.open(QIODevice::ReadOnly)) qFatal("missing sample config %s", name);
    return file.readAll().toStdString();
}

ModelSpec sample(const char* name) {
    return parseModelConfig(sampleText(name));
}

std::string text(const QJsonObject& json) {
    return QJsonDocument(json).toJson(QJsonDocument::Compact).toStdString();
}

ModelSpec parse(const QJsonObject& json) {
    return parseModelConfig(text(json));
}

QString parseError(const QJsonObject& json) {
    return errorOf([&] { parseModelConfig(text(json)); });
}

QJsonObject with(QJsonObject json, const QJsonObject& changes) {
    for (auto it = changes.begin(); it != changes.end(); ++it)
        json[it.key()] = it.value();
    return json;
}

QJsonObject without(QJsonObject json, const char* key) {
    json.remove(key);
    return json;
}

// The fewest keys each architecture accepts: the sizes that fix tensor shapes.
QJsonObject minimalBert(const char* modelType = "bert") {
    return {{"model_type", modelType},       {"vocab_size", 100},        {"hidden_size", 64},
            {"num_hidden_layers", 2},        {"num_attention_heads", 4}, {"intermediate_size", 128},
            {"max_position_embeddings", 32}, {"type_vocab_size", 2}};
}

QJsonObject minimalDistilBert() {
    return {{"model_type", "distilbert"},
            {"vocab_size", 100},
            {"dim", 64},
            {"n_layers", 2},
            {"n_heads", 4},
            {"hidden_dim", 128},
            {"max_position_embeddings", 32}};
}

QJsonObject minimalGpt2() {
    return {{"model_type", "gpt2"}, {"vocab_size", 100}, {"n_embd", 64},
            {"n_layer", 2},         {"n_head", 4},       {"n_positions", 32}};
}

// A zoo encoder of four layers with a `headlight` section.
QJsonObject minimalZoo(const QJsonObject& section) {
    return {{"model_type", "headlight"},     {"vocab_size", 64},         {"hidden_size", 32},
            {"num_hidden_layers", 4},        {"num_attention_heads", 4}, {"intermediate_size", 48},
            {"max_position_embeddings", 16}, {"headlight", section}};
}

QJsonObject funnel(const QJsonArray& blocks) {
    return {{"blocks", blocks}};
}

QJsonObject minimalDecoder(const char* modelType) {
    return {{"model_type", modelType}, {"vocab_size", 100},        {"hidden_size", 64},
            {"num_hidden_layers", 2},  {"num_attention_heads", 4}, {"intermediate_size", 128}};
}
} // namespace

class TestModelConfig : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void readsBertBaseUncased() {
        const ModelSpec s = sample("bert-base-uncased.json");
        QCOMPARE(s.architecture, Architecture::Bert);
        QCOMPARE(s.modelType, std::string("bert"));
        QCOMPARE(s.architectureClass, std::string("BertForMaskedLM"));
        QCOMPARE(s.vocabSize, 30522);
        QCOMPARE(s.hidden, 768);
        QCOMPARE(s.layers, 12);
        QCOMPARE(s.heads, 12);
        QCOMPARE(s.kvHeads, 12);
        QCOMPARE(s.headDim, 64);
        QCOMPARE(s.intermediate, 3072);
        QCOMPARE(s.maxPositions, 512);
        QCOMPARE(s.typeVocabSize, 2);
        QCOMPARE(s.normEps, 1e-12f);
        QCOMPARE(s.norm, NormKind::LayerNorm);
        QCOMPARE(s.activation, Activation::Gelu);
        QVERIFY(!s.causal);
        QCOMPARE(s.padTokenId, 0);
        QCOMPARE(s.positionOffset, 0);
        QVERIFY(!s.slidingWindow);
        QVERIFY(s.tieEmbeddings);
        QVERIFY(s.attentionBias);
        QVERIFY(s.scaleAttnWeights);
        QCOMPARE(architectureName(s.architecture), "bert");
    }

    void readsRobertaBase() {
        const ModelSpec s = sample("roberta-base.json");
        QCOMPARE(s.architecture, Architecture::Roberta);
        QCOMPARE(s.vocabSize, 50265);
        QCOMPARE(s.maxPositions, 514);
        QCOMPARE(s.typeVocabSize, 1);
        QCOMPARE(s.normEps, 1e-5f);
        QCOMPARE(s.padTokenId, 1);
        QCOMPARE(s.positionOffset, 2); // position ids start at padding_idx + 1
        QCOMPARE(s.activation, Activation::Gelu);
        QVERIFY(!s.causal);
        QVERIFY(s.tieEmbeddings);
    }

    void readsDistilBertBaseUncased() {
        const ModelSpec s = sample("distilbert-base-uncased.json");
        QCOMPARE(s.architecture, Architecture::DistilBert);
        QCOMPARE(s.architectureClass, std::string("DistilBertForMaskedLM"));
        QCOMPARE(s.hidden, 768);
        QCOMPARE(s.layers, 6);
        QCOMPARE(s.heads, 12);
        QCOMPARE(s.headDim, 64);
        QCOMPARE(s.intermediate, 3072);
        QCOMPARE(s.maxPositions, 512);
        QCOMPARE(s.typeVocabSize, 0);
        QCOMPARE(s.normEps, 1e-12f);
        QCOMPARE(s.activation, Activation::Gelu);
        QCOMPARE(s.padTokenId, 0);
        QVERIFY(s.attentionBias);
        QVERIFY(!s.causal);
    }

    void readsGpt2() {
        const ModelSpec s = sample("gpt2.json");
        QCOMPARE(s.architecture, Architecture::Gpt2);
        QCOMPARE(s.architectureClass, std::string("GPT2LMHeadModel"));
        QCOMPARE(s.vocabSize, 50257);
        QCOMPARE(s.hidden, 768);
        QCOMPARE(s.layers, 12);
        QCOMPARE(s.heads, 12);
        QCOMPARE(s.headDim, 64);
        QCOMPARE(s.intermediate, 3072); // n_inner absent → 4 · n_embd
        QCOMPARE(s.maxPositions, 1024);
        QCOMPARE(s.typeVocabSize, 0);
        QCOMPARE(s.normEps, 1e-5f);
        QCOMPARE(s.norm, NormKind::LayerNorm);
        QCOMPARE(s.activation, Activation::GeluTanh);
        QVERIFY(s.causal);
        QVERIFY(s.tieEmbeddings);
        QVERIFY(s.attentionBias);
        QVERIFY(s.scaleAttnWeights);
        QCOMPARE(s.padTokenId, -1);
    }

    void readsTinyLlama() {
        const ModelSpec s = sample("tinyllama-1.1b-chat.json");
        QCOMPARE(s.architecture, Architecture::Llama);
        QCOMPARE(s.vocabSize, 32000);
        QCOMPARE(s.hidden, 2048);
        QCOMPARE(s.layers, 22);
        QCOMPARE(s.heads, 32);
        QCOMPARE(s.kvHeads, 4);
        QCOMPARE(s.headDim, 64);
        QCOMPARE(s.intermediate, 5632);
        QCOMPARE(s.maxPositions, 2048);
        QCOMPARE(s.typeVocabSize, 0);
        QCOMPARE(s.norm, NormKind::RmsNorm);
        QCOMPARE(s.normEps, 1e-5f);
        QCOMPARE(s.activation, Activation::Silu);
        QVERIFY(s.causal);
        QCOMPARE(s.ropeTheta, 10000.0);
        QVERIFY(!s.tieEmbeddings);
        QVERIFY(!s.attentionBias);
        QVERIFY(!s.slidingWindow);
        QCOMPARE(s.padTokenId, -1);
    }

    void readsQwen25() {
        const ModelSpec s = sample("qwen2.5-0.5b.json");
        QCOMPARE(s.architecture, Architecture::Qwen2);
        QCOMPARE(s.vocabSize, 151936);
        QCOMPARE(s.hidden, 896);
        QCOMPARE(s.layers, 24);
        QCOMPARE(s.heads, 14);
        QCOMPARE(s.kvHeads, 2);
        QCOMPARE(s.headDim, 64);
        QCOMPARE(s.intermediate, 4864);
        QCOMPARE(s.maxPositions, 32768);
        QCOMPARE(s.normEps, 1e-6f);
        QCOMPARE(s.ropeTheta, 1000000.0);
        QVERIFY(s.tieEmbeddings);
        QVERIFY(s.attentionBias);
        QVERIFY(!s.slidingWindow); // use_sliding_window is false
    }

    void readsMistral() {
        const ModelSpec v1 = sample("mistral-7b-v0.1.json");
        QCOMPARE(v1.architecture, Architecture::Mistral);
        QCOMPARE(v1.hidden, 4096);
        QCOMPARE(v1.heads, 32);
        QCOMPARE(v1.kvHeads, 8);
        QCOMPARE(v1.headDim, 128);
        QCOMPARE(v1.intermediate, 14336);
        QCOMPARE(v1.maxPositions, 32768);
        QCOMPARE(v1.slidingWindow, std::optional<int>(4096));
        QCOMPARE(v1.ropeTheta, 10000.0);
        QVERIFY(!v1.attentionBias);
        QVERIFY(!v1.tieEmbeddings);
        const ModelSpec v2 = sample("mistral-7b-instruct-v0.2.json");
        QVERIFY(!v2.slidingWindow); // explicit null: no window
        QCOMPARE(v2.ropeTheta, 1000000.0);
    }

    void loadsConfigFromFolder() {
        QTemporaryDir dir;
        QVERIFY(QFile::copy(QString(HEADLIGHT_TEST_DATA) + "/configs/gpt2.json",
                            dir.filePath("config.json")));
        QCOMPARE(loadModelConfig(dir.path().toStdString()).hidden, 768);
        QTemporaryDir empty;
        QCOMPARE(errorOf([&] { loadModelConfig(empty.path().toStdString()); }),
                 empty.filePath("config.json") + ": file does not exist");
        QFile broken(dir.filePath("config.json"));
        QVERIFY(broken.open(QIODevice::WriteOnly | QIODevice::Truncate));
        broken.write("{\"model_type\": \"xyz\"}");
        broken.close();
        QCOMPARE(
            errorOf([&] { loadModelConfig(dir.path().toStdString()); }),
            dir.filePath("config.json") +
                ": unsupported architecture 'xyz' (supported: bert, roberta, distilbert, gpt2, "
                "llama, qwen2, mistral, qwen3, opt, gemma2, gemma3_text, headlight)");
    }

    void appliesHuggingFaceDefaults() {
        const ModelSpec bert = parse(minimalBert());
        QCOMPARE(bert.normEps, 1e-12f);
        QCOMPARE(bert.activation, Activation::Gelu);
        QCOMPARE(bert.padTokenId, 0);
        QVERIFY(bert.tieEmbeddings);
        QVERIFY(!bert.causal);
        QCOMPARE(bert.architectureClass, std::string());

        const ModelSpec roberta = parse(minimalBert("roberta"));
        QCOMPARE(roberta.padTokenId, 1);
        QCOMPARE(roberta.positionOffset, 2);
        QCOMPARE(roberta.normEps, 1e-12f);

        const ModelSpec distil = parse(minimalDistilBert());
        QCOMPARE(distil.activation, Activation::Gelu);
        QCOMPARE(distil.padTokenId, 0);

        const ModelSpec gpt2 = parse(with(minimalGpt2(), {{"n_inner", QJsonValue::Null}}));
        QCOMPARE(gpt2.intermediate, 256);
        QCOMPARE(gpt2.normEps, 1e-5f);
        QCOMPARE(gpt2.activation, Activation::GeluTanh);
        QVERIFY(gpt2.tieEmbeddings);
        QVERIFY(gpt2.causal);
        QCOMPARE(parse(with(minimalGpt2(), {{"n_inner", 100}})).intermediate, 100);

        const ModelSpec llama = parse(minimalDecoder("llama"));
        QCOMPARE(llama.kvHeads, 4);
        QCOMPARE(llama.headDim, 16);
        QCOMPARE(llama.maxPositions, 2048);
        QCOMPARE(llama.normEps, 1e-6f);
        QCOMPARE(llama.ropeTheta, 10000.0);
        QCOMPARE(llama.activation, Activation::Silu);
        QVERIFY(!llama.tieEmbeddings);
        QVERIFY(!llama.attentionBias);
        QVERIFY(parse(with(minimalDecoder("llama"), {{"attention_bias", true}})).attentionBias);

        // Qwen2Config's own defaults: rope_theta 10000 (Qwen2.5 checkpoints write 1e6 themselves),
        // no tying, 32768 positions, and q/k/v biases always.
        const ModelSpec qwen = parse(minimalDecoder("qwen2"));
        QCOMPARE(qwen.ropeTheta, 10000.0);
        QVERIFY(!qwen.tieEmbeddings);
        QVERIFY(qwen.attentionBias);
        QCOMPARE(qwen.maxPositions, 32768);
        QVERIFY(!qwen.slidingWindow);

        const ModelSpec mistral = parse(minimalDecoder("mistral"));
        QCOMPARE(mistral.slidingWindow, std::optional<int>(4096));
        QCOMPARE(mistral.maxPositions, 131072);
        QVERIFY(!parse(with(minimalDecoder("mistral"), {{"sliding_window", QJsonValue::Null}}))
                     .slidingWindow);
    }

    void readsExplicitHeadDimAndKvHeads() {
        const ModelSpec s =
            parse(with(minimalDecoder("llama"),
                       {{"head_dim", 24}, {"num_key_value_heads", 2}, {"num_attention_heads", 6}}));
        QCOMPARE(s.headDim, 24); // 64 is not divisible by 6, which head_dim makes fine
        QCOMPARE(s.kvHeads, 2);
        QCOMPARE(parse(with(minimalDecoder("llama"), {{"num_key_value_heads", QJsonValue::Null}}))
                     .kvHeads,
                 4);
    }

    void readsActivationsByHfName() {
        QCOMPARE(parse(with(minimalBert(), {{"hidden_act", "gelu_new"}})).activation,
                 Activation::GeluTanh);
        QCOMPARE(parse(with(minimalBert(), {{"hidden_act", "relu"}})).activation, Activation::Relu);
        QCOMPARE(parse(with(minimalGpt2(), {{"activation_function", "gelu"}})).activation,
                 Activation::Gelu);
        QCOMPARE(parse(with(minimalDistilBert(), {{"activation", "relu"}})).activation,
                 Activation::Relu);
        QCOMPARE(
            parse(with(minimalDecoder("llama"), {{"hidden_act", "gelu_pytorch_tanh"}})).activation,
            Activation::GeluTanh);
    }

    void readsTransformers5RopeParameters() {
        const ModelSpec s =
            parse(with(minimalDecoder("qwen2"),
                       {{"rope_parameters",
                         QJsonObject{{"rope_type", "default"}, {"rope_theta", 1000000.0}}}}));
        QCOMPARE(s.ropeTheta, 1000000.0);
        QCOMPARE(parse(with(minimalDecoder("llama"),
                            {{"rope_scaling", QJsonObject{{"type", "default"}}}}))
                     .ropeTheta,
                 10000.0);
    }

    void readsQwen2WindowOnlyWhenEveryLayerUsesIt() {
        const QJsonObject windowed =
            with(minimalDecoder("qwen2"), {{"use_sliding_window", true}, {"sliding_window", 512}});
        QCOMPARE(parse(with(windowed, {{"max_window_layers", 0}})).slidingWindow,
                 std::optional<int>(512));
        QVERIFY(!parse(with(windowed, {{"max_window_layers", 2}})).slidingWindow);
        QCOMPARE(parseError(with(windowed, {{"max_window_layers", 1}})),
                 QString("config.json: use_sliding_window with max_window_layers 1 below "
                         "num_hidden_layers 2 mixes windowed and full attention layers, which is "
                         "not supported"));
    }

    void detectsArchitectureFromClassName_data() {
        QTest::addColumn<QJsonObject>("config");
        QTest::addColumn<QString>("className");
        QTest::addColumn<Architecture>("expected");
        const auto row = [](const QJsonObject& base, const char* className, Architecture arch) {
            QTest::newRow(className) << without(base, "model_type") << QString(className) << arch;
        };
        row(minimalBert(), "BertModel", Architecture::Bert);
        row(minimalBert(), "BertForMaskedLM", Architecture::Bert);
        row(minimalBert(), "BertForSequenceClassification", Architecture::Bert);
        row(minimalBert(), "RobertaModel", Architecture::Roberta);
        row(minimalBert(), "RobertaForMaskedLM", Architecture::Roberta);
        row(minimalDistilBert(), "DistilBertModel", Architecture::DistilBert);
        row(minimalGpt2(), "GPT2LMHeadModel", Architecture::Gpt2);
        row(minimalGpt2(), "GPT2Model", Architecture::Gpt2);
        row(minimalGpt2(), "GPT2DoubleHeadsModel", Architecture::Gpt2);
        row(minimalDecoder(""), "LlamaForCausalLM", Architecture::Llama);
        row(minimalDecoder(""), "Qwen2ForCausalLM", Architecture::Qwen2);
        row(minimalDecoder(""), "MistralForCausalLM", Architecture::Mistral);
    }
    void detectsArchitectureFromClassName() {
        QFETCH(QJsonObject, config);
        QFETCH(QString, className);
        QFETCH(Architecture, expected);
        const ModelSpec s = parse(with(config, {{"architectures", QJsonArray{className}}}));
        QCOMPARE(s.architecture, expected);
        QCOMPARE(s.architectureClass, className.toStdString());
        QCOMPARE(s.modelType, std::string());
    }

    void refusesUnknownArchitectures() {
        const QString supported =
            "(supported: bert, roberta, distilbert, gpt2, llama, qwen2, mistral, qwen3, opt, "
            "gemma2, gemma3_text, headlight)";
        QCOMPARE(parseError({{"model_type", "xyz"}, {"architectures", QJsonArray{"BertModel"}}}),
                 "config.json: unsupported architecture 'xyz' " + supported);
        QCOMPARE(parseError({{"architectures", QJsonArray{"Qwen2MoeForCausalLM"}}}),
                 "config.json: unsupported architecture 'Qwen2MoeForCausalLM' " + supported);
        QCOMPARE(parseError({{"architectures", QJsonArray{"RobertaPreLayerNormForMaskedLM"}}}),
                 "config.json: unsupported architecture 'RobertaPreLayerNormForMaskedLM' " +
                     supported);
        QCOMPARE(parseError({{"architectures", QJsonArray{"Bert"}}}),
                 "config.json: unsupported architecture 'Bert' " + supported);
        QCOMPARE(
            parseError({{"vocab_size", 100}}),
            QString("config.json: neither model_type nor architectures says which architecture "
                    "this is"));
    }

    void refusesMalformedJson() {
        QCOMPARE(errorOf([] { parseModelConfig("{\"model_type\": "); }),
                 QString("config.json: invalid JSON at byte 15 (unterminated object)"));
        QCOMPARE(errorOf([] { parseModelConfig("[1]"); }),
                 QString("config.json: not a JSON object"));
        QCOMPARE(errorOf([] { parseModelConfig("{", "/m/config.json"); }),
                 QString("/m/config.json: invalid JSON at byte 1 (unterminated object)"));
    }

    void refusesBadValues_data() {
        QTest::addColumn<QJsonObject>("config");
        QTest::addColumn<QString>("message");
        const auto row = [](const char* name, const QJsonObject& config, const char* problem) {
            QTest::newRow(name) << config << QString("config.json: ") + problem;
        };
        row("bert without hidden_size", without(minimalBert(), "hidden_size"),
            "missing 'hidden_size'");
        row("bert null vocab", with(minimalBert(), {{"vocab_size", QJsonValue::Null}}),
            "missing 'vocab_size'");
        row("bert without type_vocab_size", without(minimalBert(), "type_vocab_size"),
            "missing 'type_vocab_size'");
        row("gpt2 without n_embd", without(minimalGpt2(), "n_embd"), "missing 'n_embd'");
        row("gpt2 without n_positions", without(minimalGpt2(), "n_positions"),
            "missing 'n_positions'");
        row("distilbert without dim", without(minimalDistilBert(), "dim"), "missing 'dim'");
        row("llama without intermediate", without(minimalDecoder("llama"), "intermediate_size"),
            "missing 'intermediate_size'");
        row("too many layers", with(minimalBert(), {{"num_hidden_layers", 20000}}),
            "num_hidden_layers 20000 is out of range (1 to 10000)");
        row("zero layers", with(minimalGpt2(), {{"n_layer", 0}}),
            "n_layer 0 is out of range (1 to 10000)");
        row("negative heads", with(minimalDistilBert(), {{"n_heads", -4}}),
            "n_heads -4 is out of range (1 to 100000)");
        row("huge hidden", with(minimalDecoder("llama"), {{"hidden_size", 2000000}}),
            "hidden_size 2000000 is out of range (1 to 1000000)");
        row("huge vocab", with(minimalBert(), {{"vocab_size", 20000000}}),
            "vocab_size 20000000 is out of range (1 to 10000000)");
        row("huge positions",
            with(minimalDecoder("mistral"), {{"max_position_embeddings", 20000000}}),
            "max_position_embeddings 20000000 is out of range (1 to 10000000)");
        row("beyond int", with(minimalBert(), {{"intermediate_size", 1e300}}),
            "intermediate_size 1e+300 is out of range (1 to 10000000)");
        row("fractional", with(minimalBert(), {{"hidden_size", 768.5}}),
            "hidden_size must be an integer, not 768.5");
        row("string size", with(minimalBert(), {{"hidden_size", "768"}}),
            "hidden_size must be an integer, not \"768\"");
        row("indivisible heads", with(minimalBert(), {{"hidden_size", 66}}),
            "hidden_size 66 is not divisible by num_attention_heads 4");
        row("indivisible n_head", with(minimalGpt2(), {{"n_head", 5}}),
            "n_embd 64 is not divisible by n_head 5");
        row("kv heads", with(minimalDecoder("llama"), {{"num_key_value_heads", 3}}),
            "num_attention_heads 4 is not a multiple of num_key_value_heads 3");
        row("more kv heads", with(minimalDecoder("qwen2"), {{"num_key_value_heads", 8}}),
            "num_attention_heads 4 is not a multiple of num_key_value_heads 8");
        row("bad eps", with(minimalBert(), {{"layer_norm_eps", 0}}),
            "layer_norm_eps must be a positive number, not 0");
        row("bad theta", with(minimalDecoder("llama"), {{"rope_theta", "big"}}),
            "rope_theta must be a positive number, not \"big\"");
        row("bad tie", with(minimalDecoder("llama"), {{"tie_word_embeddings", 1}}),
            "tie_word_embeddings must be true or false, not 1");
        row("linear rope_scaling",
            with(minimalDecoder("llama"),
                 {{"rope_scaling", QJsonObject{{"type", "linear"}, {"factor", 2.0}}}}),
            "rope_scaling is not supported (type 'linear'); only plain RoPE is implemented");
        row("yarn rope_parameters",
            with(minimalDecoder("qwen2"),
                 {{"rope_parameters", QJsonObject{{"rope_type", "yarn"}, {"factor", 4.0}}}}),
            "rope_parameters type 'yarn' is not supported (rope scaling); only plain RoPE is "
            "implemented");
        row("unknown activation", with(minimalBert(), {{"hidden_act", "quick_gelu"}}),
            "hidden_act 'quick_gelu' is not supported (supported: gelu, gelu_new, "
            "gelu_pytorch_tanh, relu, silu, swish)");
        row("relative positions",
            with(minimalBert(), {{"position_embedding_type", "relative_key"}}),
            "position_embedding_type 'relative_key' is not supported (only absolute)");
        row("roberta without pad",
            with(minimalBert("roberta"), {{"pad_token_id", QJsonValue::Null}}),
            "roberta needs pad_token_id: position ids start after it");
        row("roberta positions", with(minimalBert("roberta"), {{"max_position_embeddings", 2}}),
            "max_position_embeddings 2 leaves no positions after the padding offset 2");
        row("mlp bias", with(minimalDecoder("llama"), {{"mlp_bias", true}}),
            "mlp_bias is not supported");
        row("inverse layer scaling",
            with(minimalGpt2(), {{"scale_attn_by_inverse_layer_idx", true}}),
            "scale_attn_by_inverse_layer_idx is not supported");
        row("zero window", with(minimalDecoder("mistral"), {{"sliding_window", 0}}),
            "sliding_window 0 is out of range (1 to 10000000)");
    }
    void readsTheFunnelBlocks() {
        const ModelSpec spec = parse(
            minimalZoo({{"funnel", QJsonObject{{"blocks", QJsonArray{1, 3}}, {"stride", 3}}}}));
        QCOMPARE(spec.zoo.block->funnelBlocks, (std::vector<int>{1, 3}));
        QCOMPARE(spec.zoo.block->funnelStride, 3);
        QVERIFY(parse(minimalZoo({})).zoo.block->funnelBlocks.empty());
    }

    void refusesWhatAFunnelCannotPool_data() {
        QTest::addColumn<QJsonObject>("config");
        QTest::addColumn<QString>("message");
        const auto row = [](const char* name, const QJsonObject& config, const char* problem) {
            QTest::newRow(name) << config
                                << QString("config.json: headlight section: funnel") + problem;
        };
        row("layers", minimalZoo({{"funnel", funnel({2, 1})}}),
            ": the blocks hold 3 layers but the model has 4");
        row("decoder", with(minimalZoo({{"funnel", funnel({2, 2})}}), {{"is_decoder", true}}),
            ": pooling averages neighbouring tokens, so a query would see the future; the Funnel "
            "Transformer is an encoder (no is_decoder)");
        const char* clash = ": the pooled stack runs softmax attention on rectangular maps; it "
                            "does not combine with ";
        row("rope", minimalZoo({{"funnel", funnel({2, 2})}, {"position", "rope"}}),
            qPrintable(QString(clash) +
                       "positions applied inside attention (rope, alibi, t5, xl)"));
        row("prior",
            minimalZoo({{"funnel", funnel({2, 2})}, {"prior", QJsonObject{{"kind", "residual"}}}}),
            qPrintable(QString(clash) + "an attention prior"));
        row("reversible", minimalZoo({{"funnel", funnel({2, 2})}, {"reversible", true}}),
            qPrintable(QString(clash) + "ACT, reversible layers or experts"));
        row("macaron",
            minimalZoo({{"funnel", funnel({2, 2})}, {"order", QJsonObject{{"kind", "macaron"}}}}),
            qPrintable(QString(clash) + "the macaron or sandwich order"));
    }
    void refusesWhatAFunnelCannotPool() {
        QFETCH(QJsonObject, config);
        QFETCH(QString, message);
        QCOMPARE(parseError(config), message);
    }

    void refusesBadValues() {
        QFETCH(QJsonObject, config);
        QFETCH(QString, message);
        QCOMPARE(parseError(config), message);
    }

    void refusesLlama32RopeScaling() {
        QCOMPARE(
            errorOf([] { sample("llama-3.2-1b.json"); }),
            QString("config.json: rope_scaling is not supported (type 'llama3'); only plain RoPE "
                    "is implemented"));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestModelConfig)
#include "test_model_config.moc"
