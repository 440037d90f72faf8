// Phi-3 (modeling_phi3.py): Llama's pre-RMSNorm decoder with fused projections — qkv_proj holds
// q | k | v rows (heads·d, then kv_heads·d twice) and gate_up_proj holds gate | up rows — no
// biases, rotary on the first partial_rotary_factor · head_dim features (rotate-half), and
// sliding_window on every layer when set (absent or null: none). rope_scaling (longrope, su) is
// refused by readRope.
#include "model/families/lm_heads.h"
#include "model/families/layout_helpers.h"
#include "model/families/shared_readers.h"
#include "model/model_family.h"

namespace headlight {
namespace {

void readConfig(const ConfigReader& config, ModelSpec& spec) {
    families::readLlamaConfig(config, spec, 4096);
    spec.normEps = config.positiveFloatOr("rms_norm_eps", 1e-5);
    if (config.has("sliding_window"))
        spec.slidingWindow = config.intOr("sliding_window", 0, 1, kMaxPositions);
    if (spec.headDim == 0) {
        if (spec.hidden % spec.heads != 0)
            config.fail("hidden_size " + std::to_string(spec.hidden) +
                        " is not divisible by num_attention_heads " + std::to_string(spec.heads));
        spec.headDim = spec.hidden / spec.heads;
    }
    // Phi3RotaryEmbedding: dim = int(head_dim * partial_rotary_factor).
    const double fraction = config.positiveNumberOr("partial_rotary_factor", 1.0);
    if (fraction > 1.0)
        config.fail("partial_rotary_factor " + std::to_string(fraction) + " is more than 1");
    spec.rotaryDim = int(double(spec.headDim) * fraction);
    if (spec.rotaryDim < 2 || spec.rotaryDim % 2 != 0)
        config.fail("partial_rotary_factor " + std::to_string(fraction) + " turns " +
                    std::to_string(spec.rotaryDim) + " of " + std::to_string(spec.headDim) +
                    " features per head; rotary needs an even count of at least 2");
}

HostWeights readWeights(const io::Checkpoint& checkpoint, const ModelSpec& s,
                        std::set<std::string>& read) {
    using families::rowsOf;
    const WeightReader r =
        families::readerFor(checkpoint, {"model.", ""}, "embed_tokens.weight", read);
    const int64_t d = s.hidden, f = s.intermediate;
    const int64_t q = int64_t(s.heads) * s.headDim, kv = int64_t(s.kvHeads) * s.headDim;
    HostWeights w;
    w.prefix = r.prefix();
    w.tokenEmbedding = r.get("embed_tokens.weight", {s.vocabSize, d});
    w.finalNorm = r.rmsNorm("norm", d);
    for (int i = 0; i < s.layers; ++i) {
        const std::string l = "layers." + std::to_string(i) + ".";
        HostLayer layer;
        layer.attentionNorm = r.rmsNorm(l + "input_layernorm", d);
        const Tensor qkv = r.get(l + "self_attn.qkv_proj.weight", {q + 2 * kv, d});
        layer.query.weight = rowsOf(qkv, 0, q);
        layer.key.weight = rowsOf(qkv, q, kv);
        layer.value.weight = rowsOf(qkv, q + kv, kv);
        layer.output = r.linear(l + "self_attn.o_proj", d, q, false);
        layer.ffnNorm = r.rmsNorm(l + "post_attention_layernorm", d);
        const Tensor gateUp = r.get(l + "mlp.gate_up_proj.weight", {2 * f, d});
        layer.gate.weight = rowsOf(gateUp, 0, f);
        layer.up.weight = rowsOf(gateUp, f, f);
        layer.down = r.linear(l + "mlp.down_proj", d, f, false);
        w.layers.push_back(std::move(layer));
    }
    return w;
}
} // namespace

const ModelFamily kPhi3Family{Architecture::Phi3,
                              "phi3",
                              "Phi3",
                              "Phi-3",
                              "hidden_size",
                              "num_attention_heads",
                              readConfig,
                              readWeights,
                              families::taskHeads(),
                              families::isRotaryBuffer,
                              nullptr,
                              families::readCausalLmHead};
} // namespace headlight
