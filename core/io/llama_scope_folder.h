#pragma once
// A Llama Scope SAE folder (OpenMOSS's releases fnlp/Llama3_1-8B-Base-L*): hyperparams.json and
// checkpoints/final.safetensors, read as SAELens's llama_scope loader converts them
// (sae_lens/loading/pretrained_sae_loaders.py, get_llama_scope_config_from_hf and
// llama_scope_sae_huggingface_loader) and then folds the release's norm scaling factor:
//   a JumpReLU SAE at hook_point_in; W_enc = encoder.weight^T (nn.Linear's [d_sae, d_in]),
//   W_dec = decoder.weight^T ([d_in, d_sae]), b_enc = encoder.bias, b_dec = decoder.bias;
//   b_dec not subtracted from the input; the input times s = sqrt(d_model) /
//   dataset_average_activation_norm.in (the output divided by it), and every feature's threshold
//   jump_relu_threshold · s.
// Refused in one line (SaeFolderError): a missing or garbled file, an act_fn other than jumprelu,
// a transcoder (hook_point_out other than hook_point_in), a weight of the wrong shape or not
// finite.

#include "io/sae_folder.h"

#include <string>
#include <string_view>

namespace headlight::io {

struct LlamaScopeConfig {
    SaeConfig sae;              // layout "llama-scope"
    double threshold = 0.0;     // jump_relu_threshold, before the scaling
    double scalingFactor = 1.0; // sqrt(d_model) / dataset_average_activation_norm.in
};

LlamaScopeConfig parseLlamaScopeHyperparams(std::string_view json, const std::string& source);

// The weights of `weights` (final.safetensors) checked against `config` into an SAE.
SaeFolder assembleLlamaScope(const LlamaScopeConfig& config, const SafetensorsFile& weights);

SaeFolder readLlamaScopeFolder(const std::string& folder);
} // namespace headlight::io
