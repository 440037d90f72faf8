// GPT-J (modeling_gptj.py): one LayerNorm per block feeds attention and the MLP in parallel,
// x + attn(ln_1(x)) + mlp(ln_1(x)); q, k, v and out_proj carry no bias; rotary positions on the
// first rotary_dim features of each head in the interleaved layout (rotate_every_two pairs
// features 2i and 2i + 1), base 10000 (create_sinusoidal_positions). The LM head (lm_head, with
// a bias) is untied and sits beside the base model (transformer.).
#include "model/families/lm_heads.h"
#include "model/families/layout_helpers.h"
#include "model/families/shared_readers.h"
#include "model/model_family.h"
#include "model/unexpected_tensors.h"

namespace headlight {
namespace {

void readConfig(const ConfigReader& config, ModelSpec& spec) {
    families::readGpt2Config(config, spec);
    spec.positions = PositionsKind::Rotary;
    spec.rotaryInterleaved = true;
    spec.parallelResidual = true;
    spec.tieEmbeddings = config.boolOr("tie_word_embeddings", false);
    readPadToken(config, spec, -1);
    if (spec.hidden % spec.heads != 0)
        config.fail("n_embd " + std::to_string(spec.hidden) + " is not divisible by n_head " +
                    std::to_string(spec.heads));
    spec.headDim = spec.hidden / spec.heads;
    // Why refused when null: HF then builds sin/cos over n_embd features, which only fits a
    // head's features when there is one head.
    if (config.value("rotary_dim").isNull())
        config.fail("rotary_dim null (rotary over n_embd) is not supported");
    spec.rotaryDim = config.intOr("rotary_dim", 64, 2, kMaxHidden);
    if (spec.rotaryDim % 2 != 0 || spec.rotaryDim > spec.headDim)
        config.fail("rotary_dim " + std::to_string(spec.rotaryDim) +
                    " must be even and at most the head size " + std::to_string(spec.headDim));
}

HostWeights readWeights(const io::Checkpoint& checkpoint, const ModelSpec& s,
                        std::set<std::string>& read) {
    const WeightReader r =
        families::readerFor(checkpoint, {"transformer.", ""}, "wte.weight", read);
    const int64_t d = s.hidden, f = s.intermediate;
    HostWeights w;
    w.prefix = r.prefix();
    w.tokenEmbedding = r.get("wte.weight", {s.vocabSize, d});
    w.finalNorm = r.layerNorm("ln_f", d);
    for (int i = 0; i < s.layers; ++i) {
        const std::string l = "h." + std::to_string(i) + ".";
        HostLayer layer;
        layer.attentionNorm = r.layerNorm(l + "ln_1", d);
        layer.ffnNorm = layer.attentionNorm; // the MLP reads the same ln_1(x)
        layer.query = r.linear(l + "attn.q_proj", d, d, false);
        layer.key = r.linear(l + "attn.k_proj", d, d, false);
        layer.value = r.linear(l + "attn.v_proj", d, d, false);
        layer.output = r.linear(l + "attn.out_proj", d, d, false);
        layer.up = r.linear(l + "mlp.fc_in", f, d);
        layer.down = r.linear(l + "mlp.fc_out", d, f);
        w.layers.push_back(std::move(layer));
    }
    return w;
}
} // namespace

const ModelFamily kGptJFamily{Architecture::GptJ,
                              "gptj",
                              "GPTJ",
                              "GPT-J",
                              "n_embd",
                              "n_head",
                              readConfig,
                              readWeights,
                              families::taskHeads(),
                              families::isAttentionMaskBuffer,
                              nullptr,
                              families::readBiasedLmHead};
} // namespace headlight
