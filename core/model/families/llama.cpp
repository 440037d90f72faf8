// Llama (modeling_llama.py): pre-RMSNorm decoder, rotary positions (rotate_half layout),
// grouped-query attention, a SwiGLU MLP; attention_bias puts biases on q, k, v and o_proj.
#include "model/families/layout_helpers.h"
#include "model/families/lm_heads.h"
#include "model/families/shared_readers.h"
#include "model/model_family.h"

namespace headlight {
namespace families {

void readLlamaConfig(const ConfigReader& config, ModelSpec& spec, int defaultPositions) {
    spec.vocabSize = config.requiredInt("vocab_size", 1, kMaxVocab);
    spec.hidden = config.requiredInt("hidden_size", 1, kMaxHidden);
    spec.layers = config.requiredInt("num_hidden_layers", 1, kMaxLayers);
    spec.heads = config.requiredInt("num_attention_heads", 1, kMaxHeads);
    spec.intermediate = config.requiredInt("intermediate_size", 1, kMaxIntermediate);
    spec.maxPositions = config.intOr("max_position_embeddings", defaultPositions, 1, kMaxPositions);
    spec.kvHeads = config.intOr("num_key_value_heads", spec.heads, 1, kMaxHeads);
    spec.headDim = config.intOr("head_dim", 0, 1, kMaxHidden);
    spec.norm = NormKind::RmsNorm;
    spec.normEps = config.positiveFloatOr("rms_norm_eps", 1e-6);
    spec.activation = readActivation(config, "hidden_act", "silu");
    spec.causal = true;
    spec.preNorm = true;
    spec.positions = PositionsKind::Rotary;
    spec.tieEmbeddings = config.boolOr("tie_word_embeddings", false);
    readPadToken(config, spec, -1);
    readRope(config, spec);
}

} // namespace families

namespace {
void readConfig(const ConfigReader& config, ModelSpec& spec) {
    families::readLlamaConfig(config, spec, 2048);
    spec.attentionBias = config.boolOr("attention_bias", false);
    if (config.boolOr("mlp_bias", false)) config.fail("mlp_bias is not supported");
}

} // namespace

const ModelFamily kLlamaFamily{Architecture::Llama,
                               "llama",
                               "Llama",
                               "Llama",
                               "hidden_size",
                               "num_attention_heads",
                               readConfig,
                               families::readLlamaWeights,
                               families::taskHeads(),
                               families::isRotaryBuffer,
                               nullptr,
                               families::readCausalLmHead};
} // namespace headlight
