#include "io/sae_folder.h"

#include "io/gemma_scope_folder.h"
#include "io/llama_scope_folder.h"
#include "io/safetensors.h"
#include "model/memory_budget.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <cmath>
#include <filesystem>

namespace headlight::io {
namespace {

using analysis::SaeArchitecture;
using analysis::SaeNormalization;

constexpr qint64 kMaxSaeConfigBytes = 1 << 20;
constexpr double kMaxSaeWidth = 1e8;

[[noreturn]] void saeRefuse(const std::string& source, const std::string& problem) {
    throw SaeFolderError(source + ": " + problem);
}

std::string saeDescribe(const QJsonValue& v) {
    if (v.isString()) return quotedName(v.toString().toStdString());
    if (v.isDouble()) return QString::number(v.toDouble(), 'g', 17).toStdString();
    if (v.isBool()) return v.toBool() ? "true" : "false";
    if (v.isNull()) return "null";
    return v.isArray() ? "a list" : "an object";
}

// A member that is present and not null.
bool saeHas(const QJsonObject& o, const char* key) {
    return o.contains(key) && !o.value(key).isNull();
}

int saeWidth(const QJsonObject& o, const char* key, const std::string& source) {
    if (!saeHas(o, key)) saeRefuse(source, std::string("has no ") + key);
    const QJsonValue v = o.value(key);
    const double n = v.toDouble(std::nan(""));
    if (!v.isDouble() || n != std::floor(n) || n < 1 || n > kMaxSaeWidth)
        saeRefuse(source, std::string(key) + " is " + saeDescribe(v) +
                              ", not a positive integer up to 100,000,000");
    return int(n);
}

bool saeBoolOr(const QJsonObject& o, const char* key, bool fallback, const std::string& source) {
    if (!saeHas(o, key)) return fallback;
    if (!o.value(key).isBool())
        saeRefuse(source, std::string(key) + " is " + saeDescribe(o.value(key)) + ", not a bool");
    return o.value(key).toBool();
}

std::string saeStringOr(const QJsonObject& o, const char* key, const std::string& fallback,
                        const std::string& source) {
    if (!saeHas(o, key)) return fallback;
    if (!o.value(key).isString())
        saeRefuse(source, std::string(key) + " is " + saeDescribe(o.value(key)) + ", not a string");
    return o.value(key).toString().toStdString();
}

// SAELens's version rule (handle_config_defaulting): 6.x when sae_lens_version, at the top or in
// metadata, is 6 or later; otherwise the pre-6 flat layout.
bool saeIsVersion6(const QJsonObject& o, const QJsonObject& metadata) {
    QJsonValue version = o.value("sae_lens_version");
    if (!version.isString()) version = metadata.value("sae_lens_version");
    if (!version.isString()) return false;
    const QString text = version.toString();
    bool ok = false;
    const int major = text.section('.', 0, 0).toInt(&ok);
    return ok && major >= 6;
}

SaeArchitecture saeArchitectureOf(const std::string& name, const std::string& source) {
    if (name == "standard") return SaeArchitecture::Standard;
    if (name == "jumprelu") return SaeArchitecture::JumpRelu;
    if (name == "topk") return SaeArchitecture::TopK;
    if (name == "gated") return SaeArchitecture::Gated;
    saeRefuse(source, "architecture " + quotedName(name) +
                          " is not one Headlight computes (standard, jumprelu, topk, gated)");
}

SaeNormalization saeNormalizationOf(const QJsonValue& v, const std::string& source) {
    if (v.isUndefined() || v.isNull()) return SaeNormalization::None;
    // pre-6 configs wrote a bool: true was the expected-average scaling
    if (v.isBool())
        return v.toBool() ? SaeNormalization::ExpectedAverageOnlyIn : SaeNormalization::None;
    const std::string name = v.isString() ? v.toString().toStdString() : std::string();
    if (name == "none") return SaeNormalization::None;
    if (name == "constant_norm_rescale") return SaeNormalization::ConstantNormRescale;
    if (name == "layer_norm") return SaeNormalization::LayerNorm;
    if (name == "expected_average_only_in") return SaeNormalization::ExpectedAverageOnlyIn;
    saeRefuse(source, "normalize_activations is " + saeDescribe(v) +
                          ", not none, constant_norm_rescale, layer_norm or "
                          "expected_average_only_in");
}

int saeK(const QJsonValue& v, int dSae, const std::string& source, const char* key) {
    const double n = v.toDouble(std::nan(""));
    if (!v.isDouble() || n != std::floor(n) || n < 1 || n > dSae)
        saeRefuse(source, std::string(key) + " is " + saeDescribe(v) +
                              ", not an integer from 1 to d_sae (" + std::to_string(dSae) + ")");
    return int(n);
}

void saeRequireShape(const TensorFile& file, const std::string& name,
                     const std::vector<int64_t>& shape) {
    const TensorInfo& info = file.info(name);
    if (info.shape != shape)
        saeRefuse(file.path(), quotedName(name) + " is " + shapeString(info.shape) + ", not " +
                                   shapeString(shape) + " as d_in and d_sae make it");
}

Tensor saeLoad(const TensorFile& file, const std::string& name, const std::vector<int64_t>& shape) {
    if (!file.tensors().contains(name)) saeRefuse(file.path(), "has no tensor " + name);
    saeRequireShape(file, name, shape);
    Tensor t = file.loadF32(name);
    for (std::size_t i = 0; i < t.size(); ++i)
        if (!std::isfinite(t.data()[i]))
            saeRefuse(file.path(), quotedName(name) + " holds a value that is not finite (" +
                                       std::to_string(t.data()[i]) + " at element " +
                                       std::to_string(i) + ")");
    return t;
}

std::string saeReadFile(const std::string& path, qint64 limit) {
    QFile file(QString::fromStdString(path));
    if (!file.open(QIODevice::ReadOnly))
        throw SaeFolderError(path + ": cannot be read (" + file.errorString().toStdString() + ")");
    if (file.size() > limit) saeRefuse(path, "larger than 1 MB, which no SAE config needs");
    const QByteArray bytes = file.readAll();
    return bytes.toStdString();
}
} // namespace

QJsonObject saeJsonObject(std::string_view json, const std::string& source) {
    if (json.size() > std::size_t(kMaxSaeConfigBytes))
        saeRefuse(source, "larger than 1 MB, which no SAE config needs");
    QJsonParseError error{};
    const QJsonDocument document =
        QJsonDocument::fromJson(QByteArray(json.data(), qsizetype(json.size())), &error);
    if (error.error != QJsonParseError::NoError)
        saeRefuse(source, "not JSON (" + error.errorString().toStdString() + " at byte " +
                              std::to_string(error.offset) + ")");
    if (!document.isObject()) saeRefuse(source, "not a JSON object");
    return document.object();
}

Tensor loadSaeTensor(const TensorFile& file, const std::string& name,
                     const std::vector<int64_t>& shape) {
    return saeLoad(file, name, shape);
}

std::string readSaeTextFile(const std::string& path) {
    return saeReadFile(path, kMaxSaeConfigBytes);
}

SaeConfig parseSaeConfig(std::string_view json, const std::string& source) {
    const QJsonObject o = saeJsonObject(json, source);
    const QJsonValue metadataValue = o.value("metadata");
    if (!metadataValue.isUndefined() && !metadataValue.isNull() && !metadataValue.isObject())
        saeRefuse(source, "metadata is " + saeDescribe(metadataValue) + ", not an object");
    const QJsonObject metadata = metadataValue.toObject();

    SaeConfig config;
    config.layout = saeIsVersion6(o, metadata) ? "saelens-6" : "saelens-flat";
    config.dIn = saeWidth(o, "d_in", source);
    config.dSae = saeWidth(o, "d_sae", source);
    config.applyBDecToInput = saeBoolOr(o, "apply_b_dec_to_input", true, source);
    config.normalization = saeNormalizationOf(o.value("normalize_activations"), source);

    // The hook: metadata.hook_name (6.x), else hook_name, else pre-6's hook_point.
    const char* hookKey = nullptr;
    for (const char* key : {"hook_name", "hook_point"})
        if (!hookKey && saeHas(o, key)) hookKey = key;
    if (saeHas(metadata, "hook_name"))
        config.hookName = saeStringOr(metadata, "hook_name", {}, source);
    else if (hookKey)
        config.hookName = saeStringOr(o, hookKey, {}, source);
    else
        saeRefuse(source, "names no hook (metadata.hook_name, hook_name or hook_point)");
    for (const QJsonObject* where : {&o, &metadata})
        for (const char* key : {"hook_head_index", "hook_point_head_index"})
            if (saeHas(*where, key))
                saeRefuse(source, std::string(key) + " is " + saeDescribe(where->value(key)) +
                                      ": SAEs of one attention head are not supported");
    const std::string reshape = saeStringOr(o, "reshape_activations", "none", source);
    if (reshape != "none")
        saeRefuse(source, "reshape_activations is " + quotedName(reshape) +
                              ": only residual-stream SAEs (none) are supported");
    config.modelName =
        saeStringOr(metadata, "model_name", saeStringOr(o, "model_name", {}, source), source);

    if (config.layout == "saelens-6") {
        if (!saeHas(o, "architecture")) saeRefuse(source, "(SAELens 6.x) names no architecture");
        config.architecture = saeArchitectureOf(saeStringOr(o, "architecture", {}, source), source);
        if (config.architecture == SaeArchitecture::TopK)
            config.k = saeHas(o, "k") ? saeK(o.value("k"), config.dSae, source, "k")
                                      : std::min(100, config.dSae); // TopKSAEConfig's default
    } else {
        config.architecture =
            saeArchitectureOf(saeStringOr(o, "architecture", "standard", source), source);
        const std::string activation = saeStringOr(
            o, "activation_fn_str", saeStringOr(o, "activation_fn", "relu", source), source);
        if (activation == "topk") {
            const QJsonValue kwargs = o.value("activation_fn_kwargs");
            if (!kwargs.isObject() || !saeHas(kwargs.toObject(), "k"))
                saeRefuse(source, "activation_fn_str is topk but activation_fn_kwargs gives no k");
            config.architecture = SaeArchitecture::TopK;
            config.k =
                saeK(kwargs.toObject().value("k"), config.dSae, source, "activation_fn_kwargs.k");
        } else if (activation != "relu") {
            saeRefuse(source, "activation_fn_str " + quotedName(activation) +
                                  " is not one Headlight computes (relu, topk)");
        } else if (config.architecture == SaeArchitecture::TopK) {
            config.k = saeHas(o, "k") ? saeK(o.value("k"), config.dSae, source, "k")
                                      : std::min(100, config.dSae);
        }
    }
    if (config.architecture == SaeArchitecture::TopK)
        config.rescaleByDecoderNorm = saeBoolOr(o, "rescale_acts_by_decoder_norm", false, source);
    return config;
}

std::optional<double> parseActivationScaler(std::string_view json, const std::string& source) {
    const QJsonObject o = saeJsonObject(json, source);
    const QJsonValue v = o.value("scaling_factor");
    if (v.isNull()) return std::nullopt;
    if (!v.isDouble() || !std::isfinite(v.toDouble()) || v.toDouble() <= 0)
        saeRefuse(source, "scaling_factor is " + saeDescribe(v) + ", not a positive number");
    return v.toDouble();
}

void checkSaeWeightsFit(const TensorFile& weights) {
    if (const std::optional<std::string> refusal = saeLoadRefusal(weights))
        throw SaeFolderError(*refusal);
}

SaeFolder assembleSae(const SaeConfig& config, const SafetensorsFile& weights,
                      std::optional<double> scalingFactor) {
    checkSaeWeightsFit(weights);
    SaeFolder folder;
    folder.config = config;
    analysis::SparseAutoencoder& sae = folder.sae;
    sae.architecture = config.architecture;
    sae.dIn = config.dIn;
    sae.dSae = config.dSae;
    sae.applyBDecToInput = config.applyBDecToInput;
    sae.normalization = config.normalization;
    sae.k = config.k;
    sae.rescaleByDecoderNorm = config.rescaleByDecoderNorm;
    const int64_t dIn = config.dIn, dSae = config.dSae;
    sae.wEnc = saeLoad(weights, "W_enc", {dIn, dSae});
    sae.wDec = saeLoad(weights, "W_dec", {dSae, dIn});
    sae.bDec = saeLoad(weights, "b_dec", {dIn});
    switch (config.architecture) {
    case SaeArchitecture::Standard:
    case SaeArchitecture::TopK:
        sae.bEnc = saeLoad(weights, "b_enc", {dSae});
        break;
    case SaeArchitecture::JumpRelu:
        sae.bEnc = saeLoad(weights, "b_enc", {dSae});
        if (weights.contains("threshold") || !weights.contains("log_threshold")) {
            sae.threshold = saeLoad(weights, "threshold", {dSae});
        } else { // a training checkpoint: threshold = exp(log_threshold)
            sae.threshold = saeLoad(weights, "log_threshold", {dSae});
            for (float& t : sae.threshold.values())
                t = std::exp(t);
        }
        break;
    case SaeArchitecture::Gated:
        sae.bGate = saeLoad(weights, "b_gate", {dSae});
        sae.rMag = saeLoad(weights, "r_mag", {dSae});
        sae.bMag = saeLoad(weights, "b_mag", {dSae});
        for (float r : sae.rMag.values())
            if (!std::isfinite(std::exp(r)))
                saeRefuse(weights.path(),
                          "r_mag holds " + std::to_string(r) + ", whose exp overflows f32");
        break;
    }
    if (config.rescaleByDecoderNorm) {
        const auto wDec = sae.wDec.matrix();
        for (int64_t f = 0; f < dSae; ++f)
            if (wDec.row(f).norm() == 0.0f)
                saeRefuse(weights.path(), "W_dec row " + std::to_string(f) +
                                              " is zero, which rescale_acts_by_decoder_norm "
                                              "divides by");
    }
    // Pre-6 SAELens saved a fine-tuning scale; all ones is dropped, as SAELens drops it.
    if (weights.contains("scaling_factor")) {
        const Tensor scale = saeLoad(weights, "scaling_factor", {dSae});
        for (float s : scale.values())
            if (s != 1.0f)
                saeRefuse(weights.path(), "scaling_factor is not all ones (a pre-6 fine-tuning "
                                          "scale), which Headlight does not apply");
    }
    if (config.normalization == SaeNormalization::ExpectedAverageOnlyIn) {
        sae.scalingFactor = scalingFactor;
        if (!scalingFactor)
            folder.notes.push_back(
                "normalize_activations is expected_average_only_in but the folder has no "
                "scaling factor (activation_scaler.json): the activations are encoded unscaled, "
                "as SAELens's load_from_disk does");
    }
    return folder;
}

namespace {
// The hook --hook named must be the folder's own, where the folder names one.
void saeCheckHook(const SaeFolder& sae, const std::string& hook) {
    if (!hook.empty() && hook != sae.config.hookName)
        throw SaeFolderError("--hook " + quotedName(hook) + " differs from the hook the SAE " +
                             "folder names, " + sae.config.hookName);
}

SaeFolder readSaelensFolder(const std::string& folder) {
    namespace fs = std::filesystem;
    const fs::path dir(folder);
    std::error_code error;
    const std::string cfgPath = (dir / "cfg.json").string();
    if (!fs::exists(cfgPath, error))
        throw SaeFolderError(folder + ": has no cfg.json (a SAELens SAE folder holds cfg.json "
                                      "and sae_weights.safetensors, a Llama Scope one "
                                      "hyperparams.json and checkpoints/final.safetensors, a Gemma "
                                      "Scope one params.npz, or config.json and "
                                      "params.safetensors)");
    const SaeConfig config = parseSaeConfig(saeReadFile(cfgPath, kMaxSaeConfigBytes), cfgPath);
    const std::string weightsPath = (dir / "sae_weights.safetensors").string();
    if (!fs::exists(weightsPath, error))
        throw SaeFolderError(folder + ": has no sae_weights.safetensors");
    std::optional<double> scalingFactor;
    const std::string scalerPath = (dir / "activation_scaler.json").string();
    if (fs::exists(scalerPath, error))
        scalingFactor =
            parseActivationScaler(saeReadFile(scalerPath, kMaxSaeConfigBytes), scalerPath);
    try {
        const SafetensorsFile weights(weightsPath);
        return assembleSae(config, weights, scalingFactor);
    } catch (const CheckpointError& e) {
        throw SaeFolderError(e.what());
    }
}
} // namespace

SaeFolder readSaeFolder(const std::string& folder, const std::string& hook) {
    namespace fs = std::filesystem;
    const fs::path dir(folder);
    std::error_code error;
    if (!fs::is_directory(dir, error))
        throw SaeFolderError(folder + ": not a folder (give an SAE folder holding cfg.json and "
                                      "sae_weights.safetensors)");
    if (!fs::exists(dir / "cfg.json", error) && isGemmaScopeFolder(folder))
        return readGemmaScopeFolder(folder, hook);
    SaeFolder sae =
        !fs::exists(dir / "cfg.json", error) && fs::exists(dir / "hyperparams.json", error)
            ? readLlamaScopeFolder(folder)
            : readSaelensFolder(folder);
    saeCheckHook(sae, hook);
    return sae;
}
} // namespace headlight::io
