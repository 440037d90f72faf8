#pragma once
// A SAELens SAE folder (docs/features.md): cfg.json and sae_weights.safetensors, and
// activation_scaler.json where training left an unfolded norm scaling factor. cfg.json is read in
// both of SAELens's layouts: 6.x (top-level `architecture`, the hook in `metadata.hook_name`) and
// the older flat one (`hook_name` or `hook_point`, `hook_layer`, `activation_fn_str` with
// `activation_fn_kwargs.k` for topk, `normalize_activations` as a bool or a name), which SAELens's
// handle_pre_6_0_config maps the same way. Every failure throws SaeFolderError naming the file
// and the problem in one line: a missing or garbled file, an architecture or option Headlight
// does not compute, a weight missing, of the wrong shape for d_in and d_sae, or not finite.

#include "analysis/sparse_autoencoder.h"

#include <QJsonObject>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace headlight::io {

class SafetensorsFile;
class TensorFile;

class SaeFolderError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct SaeConfig {
    std::string
        layout; // "saelens-6", "saelens-flat", "llama-scope", "gemma-scope", "gemma-scope-2"
    analysis::SaeArchitecture architecture = analysis::SaeArchitecture::Standard;
    int dIn = 0;
    int dSae = 0;
    std::string hookName; // TransformerLens name, e.g. blocks.3.hook_resid_post
    // A transcoder's: the hook whose activations it reconstructs (Gemma Scope 2's
    // hf_hook_point_out); empty for an SAE, which reconstructs its input.
    std::string hookOutName;
    bool applyBDecToInput = true;
    analysis::SaeNormalization normalization = analysis::SaeNormalization::None;
    int k = 0;
    bool rescaleByDecoderNorm = false;
    bool affineSkip = false; // a transcoder's x·W_skip (Gemma Scope 2's affine_connection)
    std::string modelName;   // metadata.model_name / model_name, when given
};

// Parses cfg.json's text; `source` names it in messages.
SaeConfig parseSaeConfig(std::string_view json, const std::string& source);

// activation_scaler.json's {"scaling_factor": s}: s, or nothing for null.
std::optional<double> parseActivationScaler(std::string_view json, const std::string& source);

struct SaeFolder {
    SaeConfig config;
    analysis::SparseAutoencoder sae;
    std::vector<std::string> notes; // what the user should know (an unfolded factor missing, ...)
};

// The weights of `weights` checked against `config` (names, shapes, finiteness) into an SAE.
SaeFolder assembleSae(const SaeConfig& config, const SafetensorsFile& weights,
                      std::optional<double> scalingFactor);

// Refuses, in one line, weights whose f32 copies would not fit in the memory available
// (model/memory_budget.h saeLoadRefusal), before any is read; throws SaeFolderError.
void checkSaeWeightsFit(const TensorFile& weights);

// `name` from `file`, checked to have `shape` and only finite values; throws SaeFolderError.
Tensor loadSaeTensor(const TensorFile& file, const std::string& name,
                     const std::vector<int64_t>& shape);
// A config's text (cfg.json, hyperparams.json) as a JSON object; throws SaeFolderError, named by
// `source`, for more than 1 MB, text that is not JSON, or JSON that is not an object.
QJsonObject saeJsonObject(std::string_view json, const std::string& source);
// A small JSON file (cfg.json, hyperparams.json: at most 1 MB) read whole; throws SaeFolderError.
std::string readSaeTextFile(const std::string& path);

// Reads `folder`: cfg.json, sae_weights.safetensors, activation_scaler.json when present; a
// folder with hyperparams.json and no cfg.json is read as Llama Scope (llama_scope_folder.h),
// one with params.npz or params.safetensors as Gemma Scope (gemma_scope_folder.h). `hook`, when
// not empty, is the hook the user named (--hook): the SAE's own where its folder names none
// (Gemma Scope 1), refused where it differs from the one the folder names.
SaeFolder readSaeFolder(const std::string& folder, const std::string& hook = {});
} // namespace headlight::io
