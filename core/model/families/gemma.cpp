// Gemma 2 (modeling_gemma2.py) and Gemma 3 text (modeling_gemma3.py, Gemma3ForCausalLM): the
// Llama layout with four RMSNorms per layer, each computing x·(1 + w) — input_layernorm before
// attention, post_attention_layernorm on its output, pre_ and post_feedforward_layernorm around
// the GeGLU MLP (hidden_activation, gelu_pytorch_tanh); token embeddings scaled by
// sqrt(hidden_size); scores scaled by query_pre_attn_scalar^-0.5; windowed and global layers
// alternating (layer_types, else Gemma 2: every even layer windowed, Gemma 3: all but every
// sliding_window_pattern-th); tied embeddings. Gemma 2 soft-caps scores and logits
// (attn_logit_softcapping, final_logit_softcapping: c·tanh(s/c)); Gemma 3 norms q and k per head
// (q_norm, k_norm) and gives its windowed layers their own rotary base (rope_local_base_freq).
#include "model/families/lm_heads.h"
#include "model/families/layout_helpers.h"
#include "model/families/shared_readers.h"
#include "model/model_family.h"

#include <QJsonArray>
#include <QJsonObject>
#include <cmath>

namespace headlight {
namespace {

enum class Generation { Gemma2, Gemma3 };

// A positive number, or null for "no soft-capping" (0 here); absent = the generation's default.
float softcapOf(const ConfigReader& config, const char* key, double fallback) {
    const QJsonValue value = config.value(key);
    if (value.isNull()) return 0.0f;
    if (value.isUndefined()) return float(fallback);
    return config.positiveFloatOr(key, fallback);
}

// layer_types when given, else the generation's fixed pattern; true marks a global layer.
std::vector<bool> globalLayers(const ConfigReader& config, const ModelSpec& spec,
                               Generation generation) {
    std::vector<bool> global;
    if (config.has("layer_types")) {
        const QJsonValue types = config.value("layer_types");
        if (!types.isArray() || types.toArray().size() != spec.layers)
            config.fail("layer_types must list one kind per layer (" + std::to_string(spec.layers) +
                        ")");
        for (const QJsonValue& type : types.toArray()) {
            const QString kind = type.toString();
            if (kind != "sliding_attention" && kind != "full_attention")
                config.fail("layer_types entry " + ConfigReader::describe(type) +
                            " is not supported (sliding_attention or full_attention)");
            global.push_back(kind == "full_attention");
        }
        return global;
    }
    const int pattern = generation == Generation::Gemma2
                            ? 2
                            : config.intOr("sliding_window_pattern", 6, 1, kMaxLayers);
    for (int i = 0; i < spec.layers; ++i)
        global.push_back((i + 1) % pattern == 0);
    return global;
}

// Transformers 5 writes rope_parameters per layer kind: {"full_attention": {...},
// "sliding_attention": {...}}; earlier versions rope_theta and rope_local_base_freq.
void readGemmaRope(const ConfigReader& config, ModelSpec& spec, Generation generation) {
    const QJsonObject parameters = config.value("rope_parameters").toObject();
    if (!parameters.contains("full_attention") && !parameters.contains("sliding_attention")) {
        readRope(config, spec);
        if (generation == Generation::Gemma3)
            spec.localRopeTheta = config.positiveNumberOr("rope_local_base_freq", 10000.0);
        return;
    }
    const auto theta = [&](const char* kind) {
        const QJsonObject rope = parameters.value(kind).toObject();
        const QString type = rope.value("rope_type").toString("default");
        if (type != "default")
            config.fail(std::string("rope_parameters ") + kind + " type '" + type.toStdString() +
                        "' is not supported (rope scaling); only plain RoPE is implemented");
        const double value = rope.value("rope_theta").toDouble(10000.0);
        if (!std::isfinite(value) || value <= 0)
            config.fail(std::string("rope_parameters ") + kind +
                        " rope_theta must be a positive number");
        return value;
    };
    spec.ropeTheta = theta("full_attention");
    spec.localRopeTheta = theta("sliding_attention");
}

void readGemmaConfig(const ConfigReader& config, ModelSpec& spec, Generation generation) {
    const bool gemma2 = generation == Generation::Gemma2;
    spec.vocabSize = config.requiredInt("vocab_size", 1, kMaxVocab);
    spec.hidden = config.requiredInt("hidden_size", 1, kMaxHidden);
    spec.layers = config.requiredInt("num_hidden_layers", 1, kMaxLayers);
    spec.heads = config.requiredInt("num_attention_heads", 1, kMaxHeads);
    spec.intermediate = config.requiredInt("intermediate_size", 1, kMaxIntermediate);
    spec.maxPositions =
        config.intOr("max_position_embeddings", gemma2 ? 8192 : 131072, 1, kMaxPositions);
    spec.kvHeads = config.intOr("num_key_value_heads", 4, 1, kMaxHeads);
    spec.headDim = config.intOr("head_dim", 256, 1, kMaxHidden);
    spec.norm = NormKind::RmsNorm;
    spec.normEps = config.positiveFloatOr("rms_norm_eps", 1e-6);
    spec.activation = readActivation(config, "hidden_activation", "gelu_pytorch_tanh");
    spec.causal = true;
    spec.preNorm = true;
    spec.sandwichNorms = true;
    spec.positions = PositionsKind::Rotary;
    spec.tieEmbeddings = config.boolOr("tie_word_embeddings", true);
    spec.attentionBias = config.boolOr("attention_bias", false);
    readPadToken(config, spec, 0);
    readGemmaRope(config, spec, generation);
    // HF multiplies by sqrt(hidden_size) rounded to the hidden dtype: f32 here.
    spec.embeddingScale = float(std::sqrt(double(spec.hidden)));
    spec.attentionScale =
        float(1.0 / std::sqrt(config.positiveNumberOr("query_pre_attn_scalar", 256.0)));
    spec.attentionSoftcap = softcapOf(config, "attn_logit_softcapping", gemma2 ? 50.0 : 0.0);
    spec.finalSoftcap = softcapOf(config, "final_logit_softcapping", gemma2 ? 30.0 : 0.0);
    spec.qkNorm = !gemma2;
    if (config.boolOr("use_bidirectional_attention", false))
        config.fail("use_bidirectional_attention (EmbeddingGemma) is not supported");
    // Absent means HF's default of 4096; null means no window on any layer.
    if (!config.value("sliding_window").isNull()) {
        spec.slidingWindow = config.intOr("sliding_window", 4096, 1, kMaxPositions);
        spec.globalLayers = globalLayers(config, spec, generation);
    }
}

void readGemma2Config(const ConfigReader& config, ModelSpec& spec) {
    readGemmaConfig(config, spec, Generation::Gemma2);
}

void readGemma3Config(const ConfigReader& config, ModelSpec& spec) {
    readGemmaConfig(config, spec, Generation::Gemma3);
}

// Gemma's RMSNorm stores w and scales by 1 + w (Gemma2RMSNorm.forward): read as gamma = 1 + w.
HostNorm gemmaNorm(const WeightReader& r, const std::string& name, int64_t d) {
    Tensor gamma = r.get(name + ".weight", {d});
    for (float& w : gamma.values())
        w += 1.0f;
    return {std::move(gamma), Tensor()};
}

HostWeights readGemmaWeights(const io::Checkpoint& checkpoint, const ModelSpec& s,
                             std::set<std::string>& read) {
    const WeightReader r =
        families::readerFor(checkpoint, {"model.", ""}, "embed_tokens.weight", read);
    const int64_t d = s.hidden, f = s.intermediate, qd = int64_t(s.heads) * s.headDim,
                  kvd = int64_t(s.kvHeads) * s.headDim;
    const bool bias = s.attentionBias;
    HostWeights w;
    w.prefix = r.prefix();
    w.tokenEmbedding = r.get("embed_tokens.weight", {s.vocabSize, d});
    w.finalNorm = gemmaNorm(r, "norm", d);
    for (int i = 0; i < s.layers; ++i) {
        const std::string l = "layers." + std::to_string(i) + ".";
        HostLayer layer;
        layer.attentionNorm = gemmaNorm(r, l + "input_layernorm", d);
        layer.query = r.linear(l + "self_attn.q_proj", qd, d, bias);
        layer.key = r.linear(l + "self_attn.k_proj", kvd, d, bias);
        layer.value = r.linear(l + "self_attn.v_proj", kvd, d, bias);
        layer.output = r.linear(l + "self_attn.o_proj", d, qd, bias);
        if (s.qkNorm) {
            layer.queryNorm = gemmaNorm(r, l + "self_attn.q_norm", s.headDim);
            layer.keyNorm = gemmaNorm(r, l + "self_attn.k_norm", s.headDim);
        }
        layer.postAttentionNorm = gemmaNorm(r, l + "post_attention_layernorm", d);
        layer.ffnNorm = gemmaNorm(r, l + "pre_feedforward_layernorm", d);
        layer.postFfnNorm = gemmaNorm(r, l + "post_feedforward_layernorm", d);
        layer.gate = r.linear(l + "mlp.gate_proj", f, d, false);
        layer.up = r.linear(l + "mlp.up_proj", f, d, false);
        layer.down = r.linear(l + "mlp.down_proj", d, f, false);
        w.layers.push_back(std::move(layer));
    }
    return w;
}
} // namespace

const ModelFamily kGemma2Family{Architecture::Gemma2,
                                "gemma2",
                                "Gemma2",
                                "Gemma 2",
                                "hidden_size",
                                "num_attention_heads",
                                readGemma2Config,
                                readGemmaWeights,
                                families::taskHeads(),
                                families::isRotaryBuffer,
                                nullptr,
                                families::readCausalLmHead};

const ModelFamily kGemma3Family{Architecture::Gemma3,
                                "gemma3_text",
                                "Gemma3",
                                "Gemma 3",
                                "hidden_size",
                                "num_attention_heads",
                                readGemma3Config,
                                readGemmaWeights,
                                families::taskHeads(),
                                families::isRotaryBuffer,
                                nullptr,
                                families::readCausalLmHead};
} // namespace headlight
