#include "io/llama_scope_folder.h"

#include "io/safetensors.h"

#include <QJsonObject>
#include <cmath>
#include <filesystem>

namespace headlight::io {
namespace {

[[noreturn]] void llamaScopeRefuse(const std::string& source, const std::string& problem) {
    throw SaeFolderError(source + ": " + problem);
}

double llamaScopeNumber(const QJsonObject& o, const char* key, const std::string& source,
                        bool positive) {
    const QJsonValue v = o.value(key);
    if (!v.isDouble() || !std::isfinite(v.toDouble()) || (positive && v.toDouble() <= 0))
        llamaScopeRefuse(source, std::string("has no ") + key + " that is a " +
                                     (positive ? "positive " : "") + "number");
    return v.toDouble();
}

int llamaScopeWidth(const QJsonObject& o, const char* key, const std::string& source) {
    const double n = llamaScopeNumber(o, key, source, true);
    if (n != std::floor(n) || n > 1e8)
        llamaScopeRefuse(source, std::string(key) + " is not a positive integer up to 100,000,000");
    return int(n);
}

// nn.Linear's [out, in] as [in, out].
Tensor llamaScopeTransposed(const Tensor& t) {
    const int64_t rows = t.dim(0), cols = t.dim(1);
    Tensor out({cols, rows});
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
            out.data()[c * rows + r] = t.data()[r * cols + c];
    return out;
}
} // namespace

LlamaScopeConfig parseLlamaScopeHyperparams(std::string_view json, const std::string& source) {
    const QJsonObject o = saeJsonObject(json, source);

    LlamaScopeConfig config;
    SaeConfig& sae = config.sae;
    sae.layout = "llama-scope";
    sae.architecture = analysis::SaeArchitecture::JumpRelu;
    sae.applyBDecToInput = false;
    sae.normalization = analysis::SaeNormalization::ExpectedAverageOnlyIn;
    sae.dIn = llamaScopeWidth(o, "d_model", source);
    sae.dSae = llamaScopeWidth(o, "d_sae", source);
    const QJsonValue act = o.value("act_fn");
    if (!act.isUndefined() && act.toString() != "jumprelu")
        llamaScopeRefuse(source, "act_fn is not jumprelu: Headlight reads Llama Scope's JumpReLU "
                                 "SAEs, as SAELens does");
    if (!o.value("hook_point_in").isString())
        llamaScopeRefuse(source, "has no hook_point_in that is a string");
    sae.hookName = o.value("hook_point_in").toString().toStdString();
    const QJsonValue out = o.value("hook_point_out");
    if (!out.isUndefined() && out.toString().toStdString() != sae.hookName)
        llamaScopeRefuse(source, "hook_point_out differs from hook_point_in: a transcoder, which "
                                 "Headlight does not read");
    config.threshold = llamaScopeNumber(o, "jump_relu_threshold", source, false);
    const QJsonObject norms = o.value("dataset_average_activation_norm").toObject();
    const double normIn =
        llamaScopeNumber(norms, "in", source + " dataset_average_activation_norm", true);
    config.scalingFactor = std::sqrt(double(sae.dIn)) / normIn;
    if (!std::isfinite(config.scalingFactor) || config.scalingFactor <= 0)
        llamaScopeRefuse(source, "dataset_average_activation_norm.in gives no finite scale");
    return config;
}

SaeFolder assembleLlamaScope(const LlamaScopeConfig& config, const SafetensorsFile& weights) {
    checkSaeWeightsFit(weights);
    SaeFolder folder;
    folder.config = config.sae;
    analysis::SparseAutoencoder& sae = folder.sae;
    sae.architecture = analysis::SaeArchitecture::JumpRelu;
    sae.dIn = config.sae.dIn;
    sae.dSae = config.sae.dSae;
    sae.applyBDecToInput = false;
    sae.normalization = analysis::SaeNormalization::ExpectedAverageOnlyIn;
    sae.scalingFactor = config.scalingFactor;
    const int64_t dIn = sae.dIn, dSae = sae.dSae;
    sae.wEnc = llamaScopeTransposed(loadSaeTensor(weights, "encoder.weight", {dSae, dIn}));
    sae.wDec = llamaScopeTransposed(loadSaeTensor(weights, "decoder.weight", {dIn, dSae}));
    sae.bEnc = loadSaeTensor(weights, "encoder.bias", {dSae});
    sae.bDec = loadSaeTensor(weights, "decoder.bias", {dIn});
    sae.threshold = Tensor({dSae}, float(config.threshold * config.scalingFactor));
    return folder;
}

SaeFolder readLlamaScopeFolder(const std::string& folder) {
    namespace fs = std::filesystem;
    const fs::path dir(folder);
    const std::string hyperparams = (dir / "hyperparams.json").string();
    const LlamaScopeConfig config =
        parseLlamaScopeHyperparams(readSaeTextFile(hyperparams), hyperparams);
    const std::string weightsPath = (dir / "checkpoints" / "final.safetensors").string();
    std::error_code error;
    if (!fs::exists(weightsPath, error))
        throw SaeFolderError(folder +
                             ": has hyperparams.json but no checkpoints/final.safetensors");
    try {
        const SafetensorsFile weights(weightsPath);
        return assembleLlamaScope(config, weights);
    } catch (const CheckpointError& e) {
        throw SaeFolderError(e.what());
    }
}
} // namespace headlight::io
