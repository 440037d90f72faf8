// config.json → ModelSpec. Key names and defaults follow Hugging Face transformers'
// configuration_<model>.py, so a config means here what it means there. One deliberate
// difference: the sizes that fix tensor shapes (vocabulary, width, depth, heads, MLP width,
// learned position and token-type tables) must be written out. save_pretrained always writes
// them, and silently assuming HF's 7B-sized defaults would only turn a broken config into a
// confusing shape mismatch later.
#include "model/model_spec.h"

#include "io/safetensors.h"
#include "variants/applicability.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <cmath>
#include <cstring>
#include <limits>

namespace headlight {
namespace {
using io::CheckpointError;

// Bounds that no real model comes near; past them a config is corrupt or hostile, and trusting
// it would mean allocating absurd tables.
constexpr int kMaxLayers = 10'000;
constexpr int kMaxHidden = 1'000'000;
constexpr int kMaxVocab = 10'000'000;
constexpr int kMaxPositions = 10'000'000;
constexpr int kMaxHeads = 100'000;
constexpr int kMaxIntermediate = 10'000'000;
constexpr int kMaxTypeVocab = 1'000'000;
constexpr qint64 kMaxConfigBytes = 16'000'000;

struct ArchitectureNames {
    Architecture architecture;
    const char* modelType;   // config model_type
    const char* classPrefix; // architectures[0] starts with it: "Bert" in "BertForMaskedLM"
};

constexpr ArchitectureNames kArchitectures[] = {
    {Architecture::Bert, "bert", "Bert"},
    {Architecture::Roberta, "roberta", "Roberta"},
    {Architecture::DistilBert, "distilbert", "DistilBert"},
    {Architecture::Gpt2, "gpt2", "GPT2"},
    {Architecture::Llama, "llama", "Llama"},
    {Architecture::Qwen2, "qwen2", "Qwen2"},
    {Architecture::Mistral, "mistral", "Mistral"},
    {Architecture::Headlight, "headlight", "Headlight"},
};

struct ActivationName {
    const char* name;
    Activation activation;
};

// HF's ACT2FN names whose function Headlight computes exactly.
constexpr ActivationName kActivations[] = {
    {"gelu", Activation::Gelu},
    {"gelu_new", Activation::GeluTanh},
    {"gelu_pytorch_tanh", Activation::GeluTanh},
    {"relu", Activation::Relu},
    {"silu", Activation::Silu},
    {"swish", Activation::Silu},
};

std::string supportedArchitectures() {
    std::string list;
    for (const auto& names : kArchitectures)
        list += (list.empty() ? "" : ", ") + std::string(names.modelType);
    return list;
}

std::string supportedActivations() {
    std::string list;
    for (const auto& names : kActivations)
        list += (list.empty() ? "" : ", ") + std::string(names.name);
    return list;
}

// A model class of the family: "<Prefix>Model", "<Prefix>For<Task>", "<Prefix>LMHeadModel" or
// "<Prefix>DoubleHeadsModel". Anything else after the prefix is another model ("Qwen2Moe...",
// "RobertaPreLayerNorm...") and must not match.
bool isClassOf(const std::string& className, const char* prefix) {
    const std::size_t prefixLength = std::strlen(prefix);
    if (className.compare(0, prefixLength, prefix) != 0) return false;
    const std::string rest = className.substr(prefixLength);
    return rest == "Model" || rest == "LMHeadModel" || rest == "DoubleHeadsModel" ||
           (rest.starts_with("For") && rest.size() > 3);
}

// Typed access to config.json keys; every failure names the source and the key.
class ConfigReader {
public:
    ConfigReader(const QJsonObject& json, std::string source)
        : json_(json)
        , source_(std::move(source)) {}

    [[noreturn]] void fail(const std::string& problem) const {
        throw CheckpointError(source_ + ": " + problem);
    }
    // Present and not null. A null reads as absence: for the optional keys read with a fallback
    // HF's default is None or means the same (n_inner, head_dim, num_key_value_heads), so the two
    // agree; where a null means something else (pad_token_id, Mistral's sliding_window) the
    // caller looks at the value itself first.
    bool has(const char* key) const { return json_.contains(key) && !json_.value(key).isNull(); }
    QJsonValue value(const char* key) const { return json_.value(key); }

    int requiredInt(const char* key, int min, int max) const {
        if (!has(key)) fail(std::string("missing '") + key + "'");
        return intIn(key, min, max);
    }
    int intOr(const char* key, int fallback, int min, int max) const {
        return has(key) ? intIn(key, min, max) : fallback;
    }
    double positiveNumberOr(const char* key, double fallback) const {
        if (!has(key)) return fallback;
        const QJsonValue v = value(key);
        if (!v.isDouble() || !std::isfinite(v.toDouble()) || v.toDouble() <= 0)
            fail(std::string(key) + " must be a positive number, not " + describe(v));
        return v.toDouble();
    }
    // A norm's eps is used as a float. Why the range check: a double such as 1e-196 rounds to 0
    // there (the norm then divides by zero on a constant row) and 1e39 overflows to inf (and the
    // conversion itself is undefined behaviour).
    float positiveFloatOr(const char* key, double fallback) const {
        const double number = positiveNumberOr(key, fallback);
        if (number < std::numeric_limits<float>::min() ||
            number > std::numeric_limits<float>::max())
            fail(std::string(key) + " " + describe(value(key)) +
                 " is out of range for a 32-bit float (1.2e-38 to 3.4e+38)");
        return static_cast<float>(number);
    }
    bool boolOr(const char* key, bool fallback) const {
        if (!has(key)) return fallback;
        if (!value(key).isBool())
            fail(std::string(key) + " must be true or false, not " + describe(value(key)));
        return value(key).toBool();
    }
    std::string stringOr(const char* key, const std::string& fallback) const {
        if (!has(key)) return fallback;
        if (!value(key).isString())
            fail(std::string(key) + " must be a string, not " + describe(value(key)));
        return value(key).toString().toStdString();
    }

    static std::string describe(const QJsonValue& v) {
        if (v.isString()) return "\"" + v.toString().left(60).toStdString() + "\"";
        if (v.isBool()) return v.toBool() ? "true" : "false";
        if (v.isNull()) return "null";
        if (v.isArray()) return "an array";
        if (v.isObject()) return "an object";
        const double number = v.toDouble();
        if (number == std::trunc(number) && std::fabs(number) < 1e15)
            return std::to_string(static_cast<long long>(number));
        return QString::number(number, 'g', QLocale::FloatingPointShortest).toStdString();
    }

private:
    int intIn(const char* key, int min, int max) const {
        const QJsonValue v = value(key);
        const double number = v.toDouble();
        if (!v.isDouble() || !std::isfinite(number) || number != std::trunc(number))
            fail(std::string(key) + " must be an integer, not " + describe(v));
        if (number < min || number > max)
            fail(std::string(key) + " " + describe(v) + " is out of range (" + std::to_string(min) +
                 " to " + std::to_string(max) + ")");
        return static_cast<int>(number);
    }

    QJsonObject json_;
    std::string source_;
};

Activation readActivation(const ConfigReader& config, const char* key, const char* fallback) {
    const std::string name = config.stringOr(key, fallback);
    for (const auto& entry : kActivations)
        if (name == entry.name) return entry.activation;
    config.fail(std::string(key) + " '" + name +
                "' is not supported (supported: " + supportedActivations() + ")");
}

Architecture detectArchitecture(const ConfigReader& config, ModelSpec& spec) {
    const QJsonValue classes = config.value("architectures");
    if (classes.isArray() && !classes.toArray().isEmpty() && classes.toArray().at(0).isString())
        spec.architectureClass = classes.toArray().at(0).toString().toStdString();
    spec.modelType = config.stringOr("model_type", "");
    if (!spec.modelType.empty()) {
        for (const auto& names : kArchitectures)
            if (spec.modelType == names.modelType) return names.architecture;
        config.fail("unsupported architecture '" + spec.modelType +
                    "' (supported: " + supportedArchitectures() + ")");
    }
    if (spec.architectureClass.empty())
        config.fail("neither model_type nor architectures says which architecture this is");
    for (const auto& names : kArchitectures)
        if (isClassOf(spec.architectureClass, names.classPrefix)) return names.architecture;
    config.fail("unsupported architecture '" + spec.architectureClass +
                "' (supported: " + supportedArchitectures() + ")");
}

// An explicit null means "no pad token" (HF passes None through); only absence takes the default.
void readPadToken(const ConfigReader& config, ModelSpec& spec, int fallback) {
    if (config.value("pad_token_id").isNull()) {
        spec.padTokenId = -1;
        return;
    }
    spec.padTokenId = config.intOr("pad_token_id", fallback, std::numeric_limits<int>::min(),
                                   std::numeric_limits<int>::max());
    if (spec.padTokenId < 0) spec.padTokenId = -1; // some configs write -1 for "none"
}

// BERT and RoBERTa share BertConfig's keys; RoBERTa differs in its pad token default (1) and in
// position ids, which start after the padding index.
void readBertFamily(const ConfigReader& config, ModelSpec& spec, bool roberta) {
    spec.vocabSize = config.requiredInt("vocab_size", 1, kMaxVocab);
    spec.hidden = config.requiredInt("hidden_size", 1, kMaxHidden);
    spec.layers = config.requiredInt("num_hidden_layers", 1, kMaxLayers);
    spec.heads = config.requiredInt("num_attention_heads", 1, kMaxHeads);
    spec.intermediate = config.requiredInt("intermediate_size", 1, kMaxIntermediate);
    spec.maxPositions = config.requiredInt("max_position_embeddings", 1, kMaxPositions);
    spec.typeVocabSize = config.requiredInt("type_vocab_size", 1, kMaxTypeVocab);
    spec.normEps = config.positiveFloatOr("layer_norm_eps", 1e-12);
    spec.activation = readActivation(config, "hidden_act", "gelu");
    spec.causal = config.boolOr("is_decoder", false);
    spec.tieEmbeddings = config.boolOr("tie_word_embeddings", true);
    spec.attentionBias = true;
    readPadToken(config, spec, roberta ? 1 : 0);
    const std::string positions = config.stringOr("position_embedding_type", "absolute");
    if (positions != "absolute")
        config.fail("position_embedding_type '" + positions + "' is not supported (only absolute)");
    if (!roberta) return;
    if (spec.padTokenId < 0) config.fail("roberta needs pad_token_id: position ids start after it");
    spec.positionOffset = spec.padTokenId + 1;
    if (spec.maxPositions <= spec.positionOffset)
        config.fail("max_position_embeddings " + std::to_string(spec.maxPositions) +
                    " leaves no positions after the padding offset " +
                    std::to_string(spec.positionOffset));
}

// Why sinusoidal_pos_embds is accepted: DistilBERT fills its position table with the sinusoids
// at init and saves it like any weight, so the checkpoint carries the table either way.
void readDistilBert(const ConfigReader& config, ModelSpec& spec) {
    spec.vocabSize = config.requiredInt("vocab_size", 1, kMaxVocab);
    spec.hidden = config.requiredInt("dim", 1, kMaxHidden);
    spec.layers = config.requiredInt("n_layers", 1, kMaxLayers);
    spec.heads = config.requiredInt("n_heads", 1, kMaxHeads);
    spec.intermediate = config.requiredInt("hidden_dim", 1, kMaxIntermediate);
    spec.maxPositions = config.requiredInt("max_position_embeddings", 1, kMaxPositions);
    spec.typeVocabSize = 0;
    spec.normEps = 1e-12f; // hard-coded in modeling_distilbert, not a config key
    spec.activation = readActivation(config, "activation", "gelu");
    spec.tieEmbeddings = config.boolOr("tie_word_embeddings", true);
    spec.attentionBias = true;
    readPadToken(config, spec, 0);
}

void readGpt2(const ConfigReader& config, ModelSpec& spec) {
    spec.vocabSize = config.requiredInt("vocab_size", 1, kMaxVocab);
    spec.hidden = config.requiredInt("n_embd", 1, kMaxHidden);
    spec.layers = config.requiredInt("n_layer", 1, kMaxLayers);
    spec.heads = config.requiredInt("n_head", 1, kMaxHeads);
    spec.intermediate = config.intOr("n_inner", 4 * spec.hidden, 1, kMaxIntermediate);
    spec.maxPositions = config.requiredInt("n_positions", 1, kMaxPositions);
    spec.normEps = config.positiveFloatOr("layer_norm_epsilon", 1e-5);
    spec.activation = readActivation(config, "activation_function", "gelu_new");
    spec.causal = true;
    spec.tieEmbeddings = config.boolOr("tie_word_embeddings", true);
    spec.attentionBias = true;
    spec.scaleAttnWeights = config.boolOr("scale_attn_weights", true);
    readPadToken(config, spec, -1);
    if (config.boolOr("scale_attn_by_inverse_layer_idx", false))
        config.fail("scale_attn_by_inverse_layer_idx is not supported");
}

std::string ropeType(const QJsonObject& rope) {
    const QJsonValue type =
        rope.contains("rope_type") ? rope.value("rope_type") : rope.value("type");
    return type.isString() ? type.toString().toStdString() : "";
}

// Plain RoPE only. Older configs write rope_theta and rope_scaling; transformers 5 folds both
// into rope_parameters {rope_type, rope_theta, ...}. A "default" type there means no scaling.
void readRope(const ConfigReader& config, ModelSpec& spec) {
    spec.ropeTheta = config.positiveNumberOr("rope_theta", 10000.0);
    if (config.has("rope_scaling")) {
        const QJsonValue scaling = config.value("rope_scaling");
        if (!scaling.isObject() || ropeType(scaling.toObject()) != "default")
            config.fail("rope_scaling is not supported (type '" +
                        (scaling.isObject() ? ropeType(scaling.toObject()) : std::string()) +
                        "'); only plain RoPE is implemented");
    }
    if (!config.has("rope_parameters")) return;
    const QJsonValue parameters = config.value("rope_parameters");
    if (!parameters.isObject()) config.fail("rope_parameters must be an object");
    const QJsonObject rope = parameters.toObject();
    const std::string type = ropeType(rope);
    if (!type.empty() && type != "default")
        config.fail("rope_parameters type '" + type +
                    "' is not supported (rope scaling); only plain RoPE is implemented");
    if (!rope.contains("rope_theta")) return;
    const double theta = rope.value("rope_theta").toDouble();
    if (!rope.value("rope_theta").isDouble() || !std::isfinite(theta) || theta <= 0)
        config.fail("rope_parameters rope_theta must be a positive number, not " +
                    ConfigReader::describe(rope.value("rope_theta")));
    spec.ropeTheta = theta;
}

// Qwen2 applies its window only to layers from max_window_layers on, and only with
// use_sliding_window; a model mixing windowed and full layers does not fit one ModelSpec field.
void readQwen2Window(const ConfigReader& config, ModelSpec& spec) {
    if (!config.boolOr("use_sliding_window", false) || !config.has("sliding_window")) return;
    const int window = config.requiredInt("sliding_window", 1, kMaxPositions);
    const int firstWindowed = config.intOr("max_window_layers", 28, 0, kMaxLayers);
    if (firstWindowed >= spec.layers) return;
    if (firstWindowed > 0)
        config.fail("use_sliding_window with max_window_layers " + std::to_string(firstWindowed) +
                    " below num_hidden_layers " + std::to_string(spec.layers) +
                    " mixes windowed and full attention layers, which is not supported");
    spec.slidingWindow = window;
}

void readLlamaFamily(const ConfigReader& config, ModelSpec& spec) {
    const Architecture arch = spec.architecture;
    spec.vocabSize = config.requiredInt("vocab_size", 1, kMaxVocab);
    spec.hidden = config.requiredInt("hidden_size", 1, kMaxHidden);
    spec.layers = config.requiredInt("num_hidden_layers", 1, kMaxLayers);
    spec.heads = config.requiredInt("num_attention_heads", 1, kMaxHeads);
    spec.intermediate = config.requiredInt("intermediate_size", 1, kMaxIntermediate);
    const int defaultPositions = arch == Architecture::Llama   ? 2048
                                 : arch == Architecture::Qwen2 ? 32768
                                                               : 4096 * 32;
    spec.maxPositions = config.intOr("max_position_embeddings", defaultPositions, 1, kMaxPositions);
    spec.kvHeads = config.intOr("num_key_value_heads", spec.heads, 1, kMaxHeads);
    spec.headDim = config.intOr("head_dim", 0, 1, kMaxHidden);
    spec.norm = NormKind::RmsNorm;
    spec.normEps = config.positiveFloatOr("rms_norm_eps", 1e-6);
    spec.activation = readActivation(config, "hidden_act", "silu");
    spec.causal = true;
    spec.tieEmbeddings = config.boolOr("tie_word_embeddings", false);
    readPadToken(config, spec, -1);
    readRope(config, spec);
    if (arch == Architecture::Llama) {
        spec.attentionBias = config.boolOr("attention_bias", false);
        if (config.boolOr("mlp_bias", false)) config.fail("mlp_bias is not supported");
    } else if (arch == Architecture::Qwen2) {
        spec.attentionBias = true; // q, k and v projections always carry biases in Qwen2
        readQwen2Window(config, spec);
    } else {
        // Mistral: absent means HF's default window of 4096; an explicit null means none.
        if (!config.value("sliding_window").isNull())
            spec.slidingWindow = config.intOr("sliding_window", 4096, 1, kMaxPositions);
    }
}

// The zoo (docs/zoo-format.md): sizes in BERT's key names, `is_decoder` for language models and the
// `headlight` section, a variant spec that also carries the architecture keys.
void readHeadlight(const ConfigReader& config, ModelSpec& spec) {
    spec.vocabSize = config.requiredInt("vocab_size", 1, kMaxVocab);
    spec.hidden = config.requiredInt("hidden_size", 1, kMaxHidden);
    spec.layers = config.requiredInt("num_hidden_layers", 1, kMaxLayers);
    spec.heads = config.requiredInt("num_attention_heads", 1, kMaxHeads);
    spec.intermediate = config.requiredInt("intermediate_size", 1, kMaxIntermediate);
    spec.maxPositions = config.requiredInt("max_position_embeddings", 1, kMaxPositions);
    spec.normEps = config.positiveFloatOr("layer_norm_eps", 1e-5);
    spec.causal = config.boolOr("is_decoder", false);
    spec.tieEmbeddings = true;
    spec.attentionBias = true;
    const QJsonValue section = config.value("headlight");
    if (!section.isUndefined() && !section.isObject()) config.fail("'headlight' must be an object");
    try {
        spec.zoo = variants::parseVariantSpec(QJsonDocument(section.toObject()).toJson().toStdString());
    } catch (const variants::VariantError& error) {
        config.fail(std::string("headlight section: ") + error.what());
    }
    if (spec.zoo.knn) config.fail("headlight section: a kNN-LM datastore belongs to a variant spec, not a checkpoint");
    if (!spec.zoo.block) spec.zoo.block = variants::BlockSpec{};
    if (spec.zoo.position == variants::PositionKind::Checkpoint) spec.zoo.position = variants::PositionKind::Learned;
    try {
        variants::checkFunnel(spec.zoo, spec);
    } catch (const variants::VariantError& error) {
        config.fail(std::string("headlight section: ") + error.what());
    }
    const std::string& activation = spec.zoo.block->activation;
    spec.activation = activation == "relu" || activation == "reglu"   ? Activation::Relu
                      : activation == "swish" || activation == "swiglu" ? Activation::Silu
                      : activation == "gelu_tanh"                       ? Activation::GeluTanh
                                                                        : Activation::Gelu;
}

void checkHeads(const ConfigReader& config, ModelSpec& spec, const char* hiddenKey,
                const char* headsKey) {
    if (spec.headDim == 0) {
        if (spec.hidden % spec.heads != 0)
            config.fail(std::string(hiddenKey) + " " + std::to_string(spec.hidden) +
                        " is not divisible by " + headsKey + " " + std::to_string(spec.heads));
        spec.headDim = spec.hidden / spec.heads;
    }
    if (spec.kvHeads == 0) spec.kvHeads = spec.heads;
    if (spec.kvHeads > spec.heads || spec.heads % spec.kvHeads != 0)
        config.fail(std::string(headsKey) + " " + std::to_string(spec.heads) +
                    " is not a multiple of num_key_value_heads " + std::to_string(spec.kvHeads));
}

const char* hiddenKeyOf(Architecture arch) {
    return arch == Architecture::Gpt2         ? "n_embd"
           : arch == Architecture::DistilBert ? "dim"
                                              : "hidden_size";
}

const char* headsKeyOf(Architecture arch) {
    return arch == Architecture::Gpt2         ? "n_head"
           : arch == Architecture::DistilBert ? "n_heads"
                                              : "num_attention_heads";
}

QJsonObject parseObject(const std::string& jsonText, const std::string& sourceName) {
    QJsonParseError error;
    const QJsonDocument document =
        QJsonDocument::fromJson(QByteArray::fromStdString(jsonText), &error);
    if (error.error != QJsonParseError::NoError)
        throw CheckpointError(sourceName + ": invalid JSON at byte " +
                              std::to_string(error.offset) + " (" +
                              error.errorString().toStdString() + ")");
    if (!document.isObject()) throw CheckpointError(sourceName + ": not a JSON object");
    return document.object();
}
} // namespace

const char* architectureName(Architecture arch) {
    for (const auto& names : kArchitectures)
        if (names.architecture == arch) return names.modelType;
    return "unknown";
}

ModelSpec parseModelConfig(const std::string& jsonText, const std::string& sourceName) {
    const ConfigReader config(parseObject(jsonText, sourceName), sourceName);
    ModelSpec spec;
    spec.architecture = detectArchitecture(config, spec);
    switch (spec.architecture) {
    case Architecture::Bert:
        readBertFamily(config, spec, false);
        break;
    case Architecture::Roberta:
        readBertFamily(config, spec, true);
        break;
    case Architecture::DistilBert:
        readDistilBert(config, spec);
        break;
    case Architecture::Gpt2:
        readGpt2(config, spec);
        break;
    case Architecture::Llama:
    case Architecture::Qwen2:
    case Architecture::Mistral:
        readLlamaFamily(config, spec);
        break;
    case Architecture::Headlight:
        readHeadlight(config, spec);
        break;
    }
    checkHeads(config, spec, hiddenKeyOf(spec.architecture), headsKeyOf(spec.architecture));
    return spec;
}

ModelSpec loadModelConfig(const std::string& folder) {
    const std::string path =
        QDir(QString::fromStdString(folder)).filePath("config.json").toStdString();
    QFile file(QString::fromStdString(path));
    if (!file.exists()) throw CheckpointError(path + ": file does not exist");
    if (!file.open(QIODevice::ReadOnly))
        throw CheckpointError(path + ": cannot open (" + file.errorString().toStdString() + ")");
    if (file.size() > kMaxConfigBytes)
        throw CheckpointError(path + ": larger than 16 MB, not a config");
    return parseModelConfig(file.readAll().toStdString(), path);
}
} // namespace headlight
