// Qwen3 (modeling_qwen3.py): Llama's layout plus a per-head RMSNorm of q and k (q_norm, k_norm,
// weights [head_dim]) applied before RoPE; biases on q, k, v and o_proj only with attention_bias;
// head_dim defaults to 128 rather than hidden / heads (configuration_qwen3.py).
#include "model/families/layout_helpers.h"
#include "model/families/lm_heads.h"
#include "model/families/shared_readers.h"
#include "model/model_family.h"

namespace headlight {
namespace {
void readConfig(const ConfigReader& config, ModelSpec& spec) {
    families::readLlamaConfig(config, spec, 32768);
    spec.headDim = config.intOr("head_dim", 128, 1, kMaxHidden);
    spec.attentionBias = config.boolOr("attention_bias", false);
    spec.qkNorm = true;
    families::readQwenWindow(config, spec);
}

} // namespace

const ModelFamily kQwen3Family{Architecture::Qwen3,
                               "qwen3",
                               "Qwen3",
                               "Qwen3",
                               "hidden_size",
                               "num_attention_heads",
                               readConfig,
                               families::readLlamaWeights,
                               families::taskHeads(),
                               families::isRotaryBuffer,
                               nullptr,
                               families::readCausalLmHead};
} // namespace headlight
