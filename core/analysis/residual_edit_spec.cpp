#include "analysis/residual_edit_spec.h"

#include "analysis/steering_vector.h"
#include "io/gguf.h"
#include "io/hub_cache.h"
#include "io/sae_folder.h"
#include "io/steering_vector_file.h"

#include <memory>

namespace headlight::analysis {
namespace {

// Why the residual stream only: an edit replaces the stream's rows entering a block (or leaving
// the last one); a sub-layer's output or hook_z is not such a stream.
SaeHook hookFor(const std::string& name, const ModelSpec& model, const std::string& what) {
    SaeHook hook;
    try {
        hook = parseSaeHook(name, model.layers);
    } catch (const std::invalid_argument& error) {
        throw ResidualEditError(what + ": " + error.what());
    }
    if (hook.point != SaeHook::Point::ResidPre && hook.point != SaeHook::Point::ResidPost)
        throw ResidualEditError(what +
                                ": edits reach the pass at the residual stream only "
                                "(blocks.L.hook_resid_pre or hook_resid_post), not at " +
                                name);
    return hook;
}

std::vector<HookedEdit> saeEdits(const ResidualEditSpec& spec, const ModelSpec& model) {
    const std::string folder = io::resolveCachedSubfolder(spec.sae).folder;
    io::SaeFolder sae;
    try {
        sae = io::readSaeFolder(folder);
    } catch (const io::SaeFolderError& error) {
        throw ResidualEditError(std::string("--sae ") + error.what());
    }
    if (!sae.config.hookOutName.empty())
        throw ResidualEditError("--sae " + folder +
                                ": a transcoder's features replace an MLP's output, which feature "
                                "edits cannot splice in; edit an SAE's features instead");
    const std::string& hookName = sae.config.hookName;
    const SaeHook hook = hookFor(hookName, model, "--sae");
    if (sae.config.dIn != model.hidden)
        throw ResidualEditError(
            "the SAE reads " + std::to_string(sae.config.dIn) + " values per token at " + hookName +
            " but the model's residual stream has " + std::to_string(model.hidden));
    try {
        return {{hookName, folder,
                 saeResidualEdit(std::make_shared<const SparseAutoencoder>(std::move(sae.sae)),
                                 spec.features, hook, hookName)}};
    } catch (const std::invalid_argument& error) {
        throw ResidualEditError(error.what());
    }
}

HookedEdit vectorEdit(const std::string& path, const std::string& hookName, const Tensor& direction,
                      float strength, const ModelSpec& model) {
    const SaeHook hook = hookFor(hookName, model, "--steering-vector " + path);
    if (int64_t(direction.size()) != model.hidden)
        throw ResidualEditError("--steering-vector " + path + ": the vector at " + hookName +
                                " has " + std::to_string(direction.size()) +
                                " values but the model's residual stream has " +
                                std::to_string(model.hidden));
    return {hookName, path,
            steeringEdit(direction, strength, residualStreamOfHook(hook),
                         "the steering vector at " + hookName)};
}

std::vector<HookedEdit> vectorEdits(const ResidualEditSpec& spec, const ModelSpec& model) {
    const std::string& path = spec.steeringVector;
    try {
        if (!path.ends_with(".gguf")) {
            const io::SteeringVectorFile file = io::readSteeringVector(path);
            return {vectorEdit(path, file.hook, file.direction, spec.strength, model)};
        }
        std::vector<HookedEdit> edits;
        for (const io::ControlDirection& d :
             io::controlVectorDirections(io::readGguf(path), path)) {
            if (d.block >= model.layers)
                throw ResidualEditError("--steering-vector " + path + ": direction." +
                                        std::to_string(d.block) + " steers block " +
                                        std::to_string(d.block) + " but the model has " +
                                        std::to_string(model.layers) + " (0 to " +
                                        std::to_string(model.layers - 1) + ")");
            edits.push_back(vectorEdit(path,
                                       "blocks." + std::to_string(d.block) + ".hook_resid_post",
                                       d.direction, spec.strength, model));
        }
        return edits;
    } catch (const ResidualEditError&) {
        throw;
    } catch (const std::exception& error) {
        throw ResidualEditError(std::string("--steering-vector ") + error.what());
    }
}
} // namespace

std::vector<HookedEdit> residualEditsOf(const ResidualEditSpec& spec, const ModelSpec& model) {
    return spec.sae.empty() ? vectorEdits(spec, model) : saeEdits(spec, model);
}
} // namespace headlight::analysis
