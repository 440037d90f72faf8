#include "io/gemma_scope_folder.h"

#include "io/npz_file.h"
#include "io/safetensors.h"

#include <QJsonObject>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>

namespace headlight::io {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void gemmaScopeRefuse(const std::string& source, const std::string& problem) {
    throw SaeFolderError(source + ": " + problem);
}

// The weight `name` under either of the spellings releases use (W_enc in Gemma Scope 1's npz,
// w_enc in Gemma Scope 2's safetensors), as SAELens maps "w_" to "W_".
std::string gemmaScopeName(const TensorFile& weights, const std::string& name) {
    if (weights.tensors().contains(name)) return name;
    std::string lower = name;
    lower[0] = 'w';
    return weights.tensors().contains(lower) ? lower : name;
}

void gemmaScopeRefuseUnknown(const TensorFile& weights) {
    static const std::vector<std::string> known = {
        "W_enc", "w_enc", "W_dec",     "w_dec",
        "b_enc", "b_dec", "threshold", "affine_skip_connection"};
    for (const auto& [name, info] : weights.tensors())
        if (std::find(known.begin(), known.end(), name) == known.end())
            gemmaScopeRefuse(weights.path(), "holds " + quotedName(name) +
                                                 ", which no Gemma Scope JumpReLU SAE or "
                                                 "transcoder has");
}

std::string gemmaScopeString(const QJsonObject& o, const char* key, const std::string& source) {
    if (!o.value(key).isString())
        gemmaScopeRefuse(source, std::string("has no ") + key + " that is a string");
    return o.value(key).toString().toStdString();
}

// The name of a Gemma Scope 1 release in a path: gemma-scope-2b-pt-res, the cache's
// models--google--gemma-scope-9b-it-res, gemma-scope-2b-pt-mlp-canonical, ...
std::string gemmaScopeSite(const fs::path& path, int& layer) {
    static const std::regex release(
        R"((?:.*--)?gemma-scope-[0-9]+b-(?:pt|it)-(res|mlp|att)(?:-canonical)?)");
    static const std::regex layerFolder(R"(layer_([0-9]{1,6}))");
    std::string site;
    for (const fs::path& part : path) {
        std::smatch match;
        const std::string text = part.string();
        if (std::regex_match(text, match, release)) site = match[1].str();
        if (std::regex_match(text, match, layerFolder)) layer = std::stoi(match[1].str());
    }
    return site;
}
} // namespace

bool isGemmaScopeFolder(const std::string& folder) {
    std::error_code error;
    return fs::exists(fs::path(folder) / "params.npz", error) ||
           fs::exists(fs::path(folder) / "params.safetensors", error);
}

std::string gemmaScopeHookFromPath(const std::string& folder) {
    int layer = -1;
    const std::string site = gemmaScopeSite(fs::absolute(fs::path(folder)), layer);
    if (site.empty() || layer < 0) return {};
    const std::string block = "blocks." + std::to_string(layer);
    if (site == "res") return block + ".hook_resid_post";
    if (site == "mlp") return block + ".hook_mlp_out";
    return block + ".attn.hook_z";
}

SaeConfig parseGemmaScope2Config(std::string_view json, const std::string& source) {
    const QJsonObject o = saeJsonObject(json, source);
    SaeConfig config;
    config.layout = "gemma-scope-2";
    config.architecture = analysis::SaeArchitecture::JumpRelu;
    config.applyBDecToInput = false;
    const std::string architecture = gemmaScopeString(o, "architecture", source);
    if (architecture != "jump_relu")
        gemmaScopeRefuse(source, "architecture " + quotedName(architecture) +
                                     " is not jump_relu, which Headlight reads");
    const std::string type =
        o.value("type").isString() ? o.value("type").toString().toStdString() : std::string("sae");
    if (type != "sae" && type != "transcoder")
        gemmaScopeRefuse(source, "type " + quotedName(type) +
                                     " is not sae or transcoder (crosscoders and cross-layer "
                                     "transcoders are not read)");
    config.hookName = gemmaScopeString(o, "hf_hook_point_in", source);
    const std::string out = gemmaScopeString(o, "hf_hook_point_out", source);
    if ((type == "transcoder") != (out != config.hookName))
        gemmaScopeRefuse(source, "type " + type + " but hf_hook_point_out is " +
                                     (out == config.hookName ? "the same as" : "not") +
                                     " hf_hook_point_in");
    if (type == "transcoder") config.hookOutName = out;
    const QJsonValue affine = o.value("affine_connection");
    if (!affine.isUndefined() && !affine.isBool())
        gemmaScopeRefuse(source, "affine_connection is not a bool");
    config.affineSkip = affine.toBool(false);
    if (config.affineSkip && type != "transcoder")
        gemmaScopeRefuse(source, "affine_connection is true for an SAE, not a transcoder");
    if (o.value("model_name").isString())
        config.modelName = o.value("model_name").toString().toStdString();
    return config;
}

SaeFolder assembleGemmaScope(SaeConfig config, const TensorFile& weights) {
    gemmaScopeRefuseUnknown(weights);
    checkSaeWeightsFit(weights);
    const std::string encoder = gemmaScopeName(weights, "W_enc");
    if (!weights.tensors().contains(encoder))
        gemmaScopeRefuse(weights.path(), "has no W_enc (or w_enc)");
    const std::vector<int64_t>& shape = weights.info(encoder).shape;
    if (shape.size() != 2 || shape[0] < 1 || shape[1] < 1 || shape[0] > 100000000 ||
        shape[1] > 100000000)
        gemmaScopeRefuse(weights.path(),
                         quotedName(encoder) + " is " + shapeString(shape) + ", not [d_in, d_sae]");
    config.dIn = int(shape[0]);
    config.dSae = int(shape[1]);
    config.architecture = analysis::SaeArchitecture::JumpRelu;
    config.applyBDecToInput = false;
    SaeFolder folder;
    folder.config = config;
    analysis::SparseAutoencoder& sae = folder.sae;
    sae.architecture = analysis::SaeArchitecture::JumpRelu;
    sae.dIn = config.dIn;
    sae.dSae = config.dSae;
    sae.applyBDecToInput = false;
    const int64_t dIn = sae.dIn, dSae = sae.dSae;
    sae.wEnc = loadSaeTensor(weights, encoder, {dIn, dSae});
    sae.wDec = loadSaeTensor(weights, gemmaScopeName(weights, "W_dec"), {dSae, dIn});
    sae.bEnc = loadSaeTensor(weights, "b_enc", {dSae});
    sae.bDec = loadSaeTensor(weights, "b_dec", {dIn});
    sae.threshold = loadSaeTensor(weights, "threshold", {dSae});
    const bool hasSkip = weights.tensors().contains("affine_skip_connection");
    if (hasSkip != config.affineSkip)
        gemmaScopeRefuse(weights.path(), hasSkip ? "holds affine_skip_connection, which the "
                                                   "config does not ask for"
                                                 : "has no affine_skip_connection, which "
                                                   "config.json's affine_connection asks for");
    if (hasSkip) sae.wSkip = loadSaeTensor(weights, "affine_skip_connection", {dIn, dIn});
    return folder;
}

SaeFolder readGemmaScopeFolder(const std::string& folder, const std::string& hook) {
    const fs::path dir(folder);
    std::error_code error;
    try {
        if (fs::exists(dir / "params.npz", error)) {
            for (const fs::path& part : fs::absolute(dir))
                if (part == "embedding")
                    gemmaScopeRefuse(folder, "an embedding SAE (hook_embed, which SAELens "
                                             "rescales by sqrt(d_in)) is not read");
            SaeConfig config;
            config.layout = "gemma-scope";
            config.hookName = gemmaScopeHookFromPath(folder);
            if (config.hookName.empty() && hook.empty())
                gemmaScopeRefuse(folder, "a Gemma Scope params.npz names no hook, and the path "
                                         "holds no release name (gemma-scope-…-res, -mlp, -att) "
                                         "and layer_L to tell it: give it with --hook, e.g. "
                                         "--hook blocks.12.hook_resid_post");
            if (!hook.empty() && !config.hookName.empty() && hook != config.hookName)
                gemmaScopeRefuse(folder, "--hook " + quotedName(hook) +
                                             " differs from the hook the release's path names, " +
                                             config.hookName);
            if (config.hookName.empty()) config.hookName = hook;
            const NpzFile weights((dir / "params.npz").string());
            return assembleGemmaScope(config, weights);
        }
        const std::string configPath = (dir / "config.json").string();
        if (!fs::exists(configPath, error))
            gemmaScopeRefuse(folder, "has params.safetensors but no config.json (Gemma Scope 2 "
                                     "keeps its hooks there)");
        SaeConfig config = parseGemmaScope2Config(readSaeTextFile(configPath), configPath);
        if (!hook.empty() && hook != config.hookName)
            gemmaScopeRefuse(folder, "--hook " + quotedName(hook) +
                                         " differs from config.json's hf_hook_point_in, " +
                                         config.hookName);
        const SafetensorsFile weights((dir / "params.safetensors").string());
        return assembleGemmaScope(config, weights);
    } catch (const CheckpointError& e) {
        throw SaeFolderError(e.what());
    }
}
} // namespace headlight::io
