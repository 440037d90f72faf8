// GPT-NeoX / Pythia (modeling_gpt_neox.py): pre-LN decoder with a fused query_key_value whose rows
// are laid out head by head ([q_h, k_h, v_h] for each head h, not q | k | v), rotary positions on
// the first rotary_pct · head_dim features of each head (rotate-half), and by default a parallel
// residual, x + attn(ln1(x)) + mlp(ln2(x)) (use_parallel_residual). The LM head embed_out is
// untied and sits beside the base model (gpt_neox.).
#include "model/families/lm_heads.h"
#include "model/families/layout_helpers.h"
#include "model/families/shared_readers.h"
#include "model/model_family.h"
#include "model/unexpected_tensors.h"

namespace headlight {
namespace {

void readConfig(const ConfigReader& config, ModelSpec& spec) {
    spec.vocabSize = config.requiredInt("vocab_size", 1, kMaxVocab);
    spec.hidden = config.requiredInt("hidden_size", 1, kMaxHidden);
    spec.layers = config.requiredInt("num_hidden_layers", 1, kMaxLayers);
    spec.heads = config.requiredInt("num_attention_heads", 1, kMaxHeads);
    spec.intermediate = config.requiredInt("intermediate_size", 1, kMaxIntermediate);
    spec.maxPositions = config.intOr("max_position_embeddings", 2048, 1, kMaxPositions);
    spec.normEps = config.positiveFloatOr("layer_norm_eps", 1e-5);
    spec.activation = readActivation(config, "hidden_act", "gelu");
    spec.causal = true;
    spec.preNorm = true;
    spec.positions = PositionsKind::Rotary;
    spec.parallelResidual = config.boolOr("use_parallel_residual", true);
    spec.attentionBias = config.boolOr("attention_bias", true);
    spec.tieEmbeddings = config.boolOr("tie_word_embeddings", false);
    readPadToken(config, spec, -1);
    readRope(config, spec);
    spec.ropeTheta = config.positiveNumberOr("rotary_emb_base", spec.ropeTheta);
    if (spec.hidden % spec.heads != 0)
        config.fail("hidden_size " + std::to_string(spec.hidden) +
                    " is not divisible by num_attention_heads " + std::to_string(spec.heads));
    spec.headDim = spec.hidden / spec.heads;
    // GPTNeoXAttention: rotary_ndims = int(head_size * rotary_pct).
    const double fraction = config.positiveNumberOr(
        "rotary_pct", config.positiveNumberOr("partial_rotary_factor", 0.25));
    if (fraction > 1.0) config.fail("rotary_pct " + std::to_string(fraction) + " is more than 1");
    const int rotated = int(double(spec.headDim) * fraction);
    if (rotated < 2 || rotated % 2 != 0)
        config.fail("rotary_pct " + std::to_string(fraction) + " turns " + std::to_string(rotated) +
                    " of " + std::to_string(spec.headDim) +
                    " features per head; rotary needs an even count of at least 2");
    spec.rotaryDim = rotated;
}

// Rows of head h's `part` (0 q, 1 k, 2 v) in a [3·heads·d, ...] fused tensor laid out per head.
Tensor headPart(const Tensor& fused, int64_t heads, int64_t d, int64_t part) {
    const int64_t cols = fused.rank() == 2 ? fused.dim(1) : 1;
    std::vector<float> values;
    values.reserve(std::size_t(heads * d * cols));
    for (int64_t h = 0; h < heads; ++h) {
        const auto begin = fused.values().begin() + (h * 3 + part) * d * cols;
        values.insert(values.end(), begin, begin + d * cols);
    }
    return fused.rank() == 2 ? Tensor({heads * d, cols}, std::move(values))
                             : Tensor({heads * d}, std::move(values));
}

HostWeights readWeights(const io::Checkpoint& checkpoint, const ModelSpec& s,
                        std::set<std::string>& read) {
    const WeightReader r =
        families::readerFor(checkpoint, {"gpt_neox.", ""}, "embed_in.weight", read);
    const int64_t d = s.hidden, f = s.intermediate, heads = s.heads, hd = s.headDim;
    const bool bias = s.attentionBias;
    HostWeights w;
    w.prefix = r.prefix();
    w.tokenEmbedding = r.get("embed_in.weight", {s.vocabSize, d});
    w.finalNorm = r.layerNorm("final_layer_norm", d);
    for (int i = 0; i < s.layers; ++i) {
        const std::string l = "layers." + std::to_string(i) + ".";
        HostLayer layer;
        layer.attentionNorm = r.layerNorm(l + "input_layernorm", d);
        // Widened, not mapped: its rows are regrouped into q, k and v.
        const std::string fused = l + "attention.query_key_value.";
        const Tensor fusedWeight = r.get(fused + "weight", {3 * d, d});
        const Tensor fusedBias = bias ? r.get(fused + "bias", {3 * d}) : Tensor();
        HostLinear* parts[] = {&layer.query, &layer.key, &layer.value};
        for (int64_t part = 0; part < 3; ++part)
            *parts[part] = {headPart(fusedWeight, heads, hd, part),
                            bias ? headPart(fusedBias, heads, hd, part) : Tensor(),
                            {}};
        layer.output = r.linear(l + "attention.dense", d, d, bias);
        layer.ffnNorm = r.layerNorm(l + "post_attention_layernorm", d);
        layer.up = r.linear(l + "mlp.dense_h_to_4h", f, d);
        layer.down = r.linear(l + "mlp.dense_4h_to_h", d, f);
        w.layers.push_back(std::move(layer));
    }
    return w;
}

// The causal-mask and rotary buffers that Pythia's checkpoints saved.
bool ignoredInBase(const std::string& name) {
    return isLayerBuffer(
        name, "layers.",
        {".attention.bias", ".attention.masked_bias", ".attention.rotary_emb.inv_freq"});
}
} // namespace

const ModelFamily kGptNeoXFamily{Architecture::GptNeoX,
                                 "gpt_neox",
                                 "GPTNeoX",
                                 "GPT-NeoX",
                                 "hidden_size",
                                 "num_attention_heads",
                                 readConfig,
                                 readWeights,
                                 families::taskHeads({"embed_out."}),
                                 ignoredInBase,
                                 nullptr,
                                 families::readEmbedOutHead};
} // namespace headlight
