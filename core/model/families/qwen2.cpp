// Qwen2 (modeling_qwen2.py): Llama's layout; q, k and v always carry biases, o_proj never does.
#include "model/families/layout_helpers.h"
#include "model/families/lm_heads.h"
#include "model/families/shared_readers.h"
#include "model/model_family.h"

namespace headlight {
namespace {

void readConfig(const ConfigReader& config, ModelSpec& spec) {
    families::readLlamaConfig(config, spec, 32768);
    spec.attentionBias = true;
    families::readQwenWindow(config, spec);
}

} // namespace

const ModelFamily kQwen2Family{Architecture::Qwen2,
                               "qwen2",
                               "Qwen2",
                               "Qwen2",
                               "hidden_size",
                               "num_attention_heads",
                               readConfig,
                               families::readQwen2Weights,
                               families::taskHeads(),
                               families::isRotaryBuffer,
                               nullptr,
                               families::readCausalLmHead};
} // namespace headlight
