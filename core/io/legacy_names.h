#pragma once
// Hugging Face renames TensorFlow-era parameter names when it loads a checkpoint: Google's
// original BERT checkpoints on the Hub store LayerNorm.gamma and LayerNorm.beta where PyTorch
// says LayerNorm.weight and LayerNorm.bias. Headlight applies the same rename, so such a
// checkpoint loads under the names the layouts expect.

#include <string>

namespace headlight::io {

// The name Hugging Face loads `stored` under: a last component "gamma" becomes "weight" and
// "beta" becomes "bias" ("bert.embeddings.LayerNorm.gamma" → "bert.embeddings.LayerNorm.weight",
// "h.0.ln_1.beta" → "h.0.ln_1.bias"); every other name is returned unchanged.
//
// Why the last component and not HF's exact test: transformers ≥ 4.48
// (PreTrainedModel._fix_state_dict_key_on_load) renames only names ending in "LayerNorm.gamma" /
// "LayerNorm.beta"; earlier versions replaced "gamma" and "beta" anywhere in the key, for every
// architecture. The last-component rule covers both (GPT-2's ln_1.gamma, Llama's norm.gamma
// too) without the old substring rule's mangling of names that merely contain the letters.
std::string modernTensorName(const std::string& stored);
} // namespace headlight::io
