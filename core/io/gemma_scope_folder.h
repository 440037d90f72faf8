#pragma once
// Google DeepMind's Gemma Scope SAEs, read as their authors compute them.
//
// Gemma Scope 1 (google/gemma-scope-*-pt-res, -mlp, -att; Lieberum et al. 2024): a folder such as
// layer_12/width_16k/average_l0_82 holding params.npz (numpy.savez: W_enc [d_in, d_sae], W_dec
// [d_sae, d_in], b_enc, b_dec, threshold), converted as SAELens's gemma_2 loader does
// (sae_lens/loading/pretrained_sae_loaders.py, get_gemma_2_config_from_hf and
// gemma_2_sae_huggingface_loader): a JumpReLU SAE, b_dec not subtracted from the input, no
// normalisation; w_-spelt names are read as W_. The folder names no hook: as SAELens does, it is
// taken from the release's name in the path (-res: blocks.L.hook_resid_post, -mlp:
// blocks.L.hook_mlp_out, -att: blocks.L.attn.hook_z) and layer_L, or given with --hook.
//
// Gemma Scope 2 (google/gemma-scope-2-*; the Gemma Scope 2 tutorial's JumpReLUSAE): a folder
// such as resid_post/layer_17_width_16k_l0_medium holding config.json (hf_hook_point_in,
// hf_hook_point_out, width, architecture jump_relu, type sae or transcoder, affine_connection)
// and params.safetensors (w_enc, w_dec, b_enc, b_dec, threshold, and affine_skip_connection
// [d_in, d_out] with affine_connection):
//   f = ReLU(p)·[p > threshold], p = x·w_enc + b_enc;  x̂ = f·w_dec + b_dec (+ x·W_skip)
// A transcoder reads hf_hook_point_in and reconstructs hf_hook_point_out. The Hugging Face module
// names are mapped to TransformerLens names by sae_hook.h.
// Refused in one line (SaeFolderError): a missing or garbled file, a hostile or truncated npz or
// npy (the readers' messages), an architecture or type other than these (crosscoders, CLTs), a
// weight missing, of the wrong shape or not finite, a hook that cannot be told.

#include "io/sae_folder.h"

#include <string>
#include <string_view>

namespace headlight::io {

// Whether `folder` holds params.npz or params.safetensors.
bool isGemmaScopeFolder(const std::string& folder);

// The hook a Gemma Scope 1 folder's path implies (empty when it does not say).
std::string gemmaScopeHookFromPath(const std::string& folder);

// Gemma Scope 2's config.json; `source` names it in messages.
SaeConfig parseGemmaScope2Config(std::string_view json, const std::string& source);

// The weights of `weights` (params.npz or params.safetensors) into a JumpReLU SAE; the widths
// come from the encoder's shape, which `config` (d_in, d_sae where set) must agree with.
SaeFolder assembleGemmaScope(SaeConfig config, const TensorFile& weights);

// `hook`: --hook's value or empty.
SaeFolder readGemmaScopeFolder(const std::string& folder, const std::string& hook);
} // namespace headlight::io
