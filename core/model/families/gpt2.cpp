// GPT-2 (modeling_gpt2.py): pre-LN decoder, learned positions, a fused c_attn (q | k | v) and
// Conv1D weights stored [in, out].
#include "model/families/layout_helpers.h"
#include "model/families/lm_heads.h"
#include "model/families/shared_readers.h"
#include "model/model_family.h"
#include "model/unexpected_tensors.h"

namespace headlight {
namespace families {

void readGpt2Config(const ConfigReader& config, ModelSpec& spec) {
    spec.vocabSize = config.requiredInt("vocab_size", 1, kMaxVocab);
    spec.hidden = config.requiredInt("n_embd", 1, kMaxHidden);
    spec.layers = config.requiredInt("n_layer", 1, kMaxLayers);
    spec.heads = config.requiredInt("n_head", 1, kMaxHeads);
    spec.intermediate = config.intOr("n_inner", 4 * spec.hidden, 1, kMaxIntermediate);
    spec.maxPositions = config.requiredInt("n_positions", 1, kMaxPositions);
    spec.normEps = config.positiveFloatOr("layer_norm_epsilon", 1e-5);
    spec.activation = readActivation(config, "activation_function", "gelu_new");
    spec.causal = true;
    spec.preNorm = true;
}

} // namespace families

namespace {

void readConfig(const ConfigReader& config, ModelSpec& spec) {
    families::readGpt2Config(config, spec);
    spec.tieEmbeddings = config.boolOr("tie_word_embeddings", true);
    spec.attentionBias = true;
    spec.scaleAttnWeights = config.boolOr("scale_attn_weights", true);
    readPadToken(config, spec, -1);
    if (config.boolOr("scale_attn_by_inverse_layer_idx", false))
        config.fail("scale_attn_by_inverse_layer_idx is not supported");
}

HostWeights readWeights(const io::Checkpoint& checkpoint, const ModelSpec& s,
                        std::set<std::string>& read) {
    using families::conv1d;
    using families::rowsOf;
    const WeightReader r =
        families::readerFor(checkpoint, {"", "transformer."}, "wte.weight", read);
    const int64_t d = s.hidden, f = s.intermediate;
    HostWeights w;
    w.prefix = r.prefix();
    w.tokenEmbedding = r.get("wte.weight", {s.vocabSize, d});
    w.positionEmbedding = r.get("wpe.weight", {s.maxPositions, d});
    w.finalNorm = r.layerNorm("ln_f", d);
    for (int i = 0; i < s.layers; ++i) {
        const std::string l = "h." + std::to_string(i) + ".";
        HostLayer layer;
        layer.attentionNorm = r.layerNorm(l + "ln_1", d);
        const HostLinear fused = conv1d(r, l + "attn.c_attn", d, 3 * d); // rows: q | k | v
        layer.query = {rowsOf(fused.weight, 0, d), rowsOf(fused.bias, 0, d), {}};
        layer.key = {rowsOf(fused.weight, d, d), rowsOf(fused.bias, d, d), {}};
        layer.value = {rowsOf(fused.weight, 2 * d, d), rowsOf(fused.bias, 2 * d, d), {}};
        layer.output = conv1d(r, l + "attn.c_proj", d, d);
        layer.ffnNorm = r.layerNorm(l + "ln_2", d);
        layer.up = conv1d(r, l + "mlp.c_fc", d, f);
        layer.down = conv1d(r, l + "mlp.c_proj", f, d);
        w.layers.push_back(std::move(layer));
    }
    return w;
}
} // namespace

const ModelFamily kGpt2Family{Architecture::Gpt2,
                              "gpt2",
                              "GPT2",
                              "GPT-2",
                              "n_embd",
                              "n_head",
                              readConfig,
                              readWeights,
                              families::taskHeads(),
                              families::isAttentionMaskBuffer,
                              nullptr,
                              families::readCausalLmHead};
} // namespace headlight
