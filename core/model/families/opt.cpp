// OPT (modeling_opt.py): a GPT-style decoder with nn.Linear weights, learned positions whose
// table has two extra rows (OPTLearnedPositionalEmbedding's offset 2: position ids are
// cumsum(mask) · mask − 1, plus 2, so padding reads row 1), ReLU, LayerNorm eps 1e-5 (nn default,
// not a config key). do_layer_norm_before picks pre-LN with a final LayerNorm (125m, 1.3b, ...)
// or post-LN without one (350m).
#include "model/families/layout_helpers.h"
#include "model/families/lm_heads.h"
#include "model/families/shared_readers.h"
#include "model/model_family.h"

namespace headlight {
namespace {
constexpr int kPositionOffset = 2;

void readConfig(const ConfigReader& config, ModelSpec& spec) {
    spec.vocabSize = config.requiredInt("vocab_size", 1, kMaxVocab);
    spec.hidden = config.requiredInt("hidden_size", 1, kMaxHidden);
    spec.layers = config.requiredInt("num_hidden_layers", 1, kMaxLayers);
    spec.heads = config.requiredInt("num_attention_heads", 1, kMaxHeads);
    spec.intermediate = config.requiredInt("ffn_dim", 1, kMaxIntermediate);
    spec.maxPositions =
        config.requiredInt("max_position_embeddings", 1, kMaxPositions - kPositionOffset) +
        kPositionOffset; // the table's rows
    spec.positionOffset = kPositionOffset;
    spec.normEps = 1e-5f;
    spec.activation = readActivation(config, "activation_function", "relu");
    spec.causal = true;
    spec.preNorm = config.boolOr("do_layer_norm_before", true);
    spec.tieEmbeddings = config.boolOr("tie_word_embeddings", true);
    spec.attentionBias = config.boolOr("enable_bias", true);
    readPadToken(config, spec, 1);
    if (!config.boolOr("layer_norm_elementwise_affine", true))
        config.fail("layer_norm_elementwise_affine false (LayerNorms without weights) is not "
                    "supported");
    const int projected = config.intOr("word_embed_proj_dim", spec.hidden, 1, kMaxHidden);
    if (projected != spec.hidden)
        config.fail("word_embed_proj_dim " + std::to_string(projected) +
                    " differs from hidden_size " + std::to_string(spec.hidden) +
                    " (project_in / project_out, as in opt-350m), which is not supported");
    if (config.boolOr("_remove_final_layer_norm", false))
        config.fail("_remove_final_layer_norm is not supported");
}

HostWeights readWeights(const io::Checkpoint& checkpoint, const ModelSpec& s,
                        std::set<std::string>& read) {
    const WeightReader r = families::readerFor(checkpoint, {"model.decoder.", "decoder.", ""},
                                               "embed_tokens.weight", read);
    const int64_t d = s.hidden, f = s.intermediate;
    const bool bias = s.attentionBias;
    HostWeights w;
    w.prefix = r.prefix();
    w.tokenEmbedding = r.get("embed_tokens.weight", {s.vocabSize, d});
    w.positionEmbedding = r.get("embed_positions.weight", {s.maxPositions, d});
    if (s.preNorm) w.finalNorm = r.layerNorm("final_layer_norm", d);
    for (int i = 0; i < s.layers; ++i) {
        const std::string l = "layers." + std::to_string(i) + ".";
        HostLayer layer;
        layer.query = r.linear(l + "self_attn.q_proj", d, d, bias);
        layer.key = r.linear(l + "self_attn.k_proj", d, d, bias);
        layer.value = r.linear(l + "self_attn.v_proj", d, d, bias);
        layer.output = r.linear(l + "self_attn.out_proj", d, d, bias);
        layer.attentionNorm = r.layerNorm(l + "self_attn_layer_norm", d);
        layer.up = r.linear(l + "fc1", f, d, bias);
        layer.down = r.linear(l + "fc2", d, f, bias);
        layer.ffnNorm = r.layerNorm(l + "final_layer_norm", d);
        w.layers.push_back(std::move(layer));
    }
    return w;
}

bool ignoredInBase(const std::string&) {
    return false;
}

// OPTLearnedPositionalEmbedding: cumsum(mask) · mask − 1 + offset.
std::vector<int32_t> positionIds(const ModelSpec& spec, std::span<const int32_t> ids,
                                 std::span<const uint8_t> mask) {
    std::vector<int32_t> positions(ids.size());
    int32_t seen = 0;
    for (std::size_t t = 0; t < ids.size(); ++t) {
        const int32_t valid = mask.empty() ? 1 : int32_t(mask[t] != 0);
        seen += valid;
        positions[t] = seen * valid - 1 + spec.positionOffset;
    }
    return positions;
}
} // namespace

const ModelFamily kOptFamily{Architecture::Opt,
                             "opt",
                             "OPT",
                             "OPT",
                             "hidden_size",
                             "num_attention_heads",
                             readConfig,
                             readWeights,
                             families::taskHeads(),
                             ignoredInBase,
                             positionIds,
                             families::readCausalLmHead};
} // namespace headlight
