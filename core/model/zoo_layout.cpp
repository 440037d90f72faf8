// The Headlight zoo's tensor names (docs/zoo-format.md) → HostWeights. Which tensors must exist
// follows the `headlight` section: a checkpoint trained with GTrXL gates has them, one without
// must not need them.
#include "model/weight_reader.h"

namespace headlight {
namespace {

using variants::BlockSpec;

bool gated(const BlockSpec& block) {
    const std::string& a = block.activation;
    return a == "glu" || a == "geglu" || a == "swiglu" || a == "reglu";
}

HostNorm norm(const WeightReader& r, const std::string& name, const ModelSpec& s) {
    const BlockSpec& block = *s.zoo.block;
    if (block.residual == BlockSpec::Residual::ReZero) return {};
    switch (block.norm) {
    case BlockSpec::Norm::Layer:
        return r.layerNorm(name, s.hidden);
    case BlockSpec::Norm::Rms:
        return r.rmsNorm(name, s.hidden);
    case BlockSpec::Norm::Scale:
        return {r.get(name + ".weight", {1}), Tensor()};
    case BlockSpec::Norm::Ada:
        return {};
    }
    return {};
}

HostFfn ffn(const WeightReader& r, const std::string& name, const ModelSpec& s) {
    const int64_t d = s.hidden, f = s.intermediate;
    HostFfn result;
    result.up = r.linear(name + ".up", f, d);
    if (gated(*s.zoo.block)) result.gate = r.linear(name + ".gate", f, d);
    result.down = r.linear(name + ".down", d, f);
    return result;
}

HostGate gate(const WeightReader& r, const std::string& name, int64_t d) {
    HostGate g;
    g.wr = r.linear(name + ".wr", d, d, false);
    g.ur = r.linear(name + ".ur", d, d, false);
    g.wz = r.linear(name + ".wz", d, d, false);
    g.uz = r.linear(name + ".uz", d, d, false);
    g.wg = r.linear(name + ".wg", d, d, false);
    g.ug = r.linear(name + ".ug", d, d, false);
    g.bias = r.get(name + ".bias_g", {d});
    return g;
}

void readFeedForward(const WeightReader& r, const std::string& l, const ModelSpec& s,
                     HostLayer& layer) {
    const BlockSpec& block = *s.zoo.block;
    if (block.experts == 0) {
        const HostFfn dense = ffn(r, l + "ffn", s);
        layer.up = dense.up;
        layer.gate = dense.gate;
        layer.down = dense.down;
        return;
    }
    for (int e = 0; e < block.experts; ++e)
        layer.experts.push_back(ffn(r, l + "experts." + std::to_string(e), s));
    if (block.routing != BlockSpec::Routing::Hash)
        layer.router = r.get(l + "router.weight", {block.experts, s.hidden});
}

HostLayer readLayer(const WeightReader& r, int index, const ModelSpec& s) {
    const BlockSpec& block = *s.zoo.block;
    const std::string l = "layers." + std::to_string(index) + ".";
    const int64_t d = s.hidden;
    HostLayer layer;
    layer.query = r.linear(l + "attention.query", d, d);
    layer.key = r.linear(l + "attention.key", d, d);
    layer.value = r.linear(l + "attention.value", d, d);
    layer.output = r.linear(l + "attention.output", d, d);
    layer.attentionNorm = norm(r, l + "attention_norm", s);
    layer.ffnNorm = norm(r, l + "ffn_norm", s);
    readFeedForward(r, l, s, layer);
    const bool macaron = block.order == BlockSpec::Order::Macaron;
    if (macaron) {
        layer.ffnPre = ffn(r, l + "ffn_pre", s);
        layer.ffnPreNorm = norm(r, l + "ffn_pre_norm", s);
    }
    if (block.residual == BlockSpec::Residual::ReZero) {
        layer.rezeroAttention = r.get(l + "rezero.attention", {1});
        layer.rezeroFfn = r.get(l + "rezero.ffn", {1});
        if (macaron) layer.rezeroFfnPre = r.get(l + "rezero.ffn_pre", {1});
    }
    if (s.zoo.position == variants::PositionKind::Xl) {
        layer.relative = r.linear(l + "attention.relative", d, d, false);
        layer.relativeU = r.get(l + "attention.u", {d});
        layer.relativeV = r.get(l + "attention.v", {d});
    }
    if (s.zoo.kernel == variants::AttentionKernel::Linformer) {
        layer.linformerE = r.get(l + "attention.linformer_e", {s.zoo.projected, s.maxPositions});
        layer.linformerF = r.get(l + "attention.linformer_f", {s.zoo.projected, s.maxPositions});
    }
    if (block.residual == BlockSpec::Residual::Gtrxl) {
        layer.gateAttention = gate(r, l + "gate_attention", d);
        layer.gateFfn = gate(r, l + "gate_ffn", d);
    }
    return layer;
}
} // namespace

HostWeights readZooWeights(const io::Checkpoint& checkpoint, const ModelSpec& s,
                           std::set<std::string>& read) {
    const WeightReader r(checkpoint, "", read);
    const BlockSpec& block = *s.zoo.block;
    HostWeights w;
    w.tokenEmbedding = r.get("embeddings.token.weight", {s.vocabSize, s.hidden});
    if (s.zoo.position == variants::PositionKind::Learned)
        w.positionEmbedding = r.get("embeddings.position.weight", {s.maxPositions, s.hidden});
    if (s.zoo.position == variants::PositionKind::T5)
        w.relativeBias = r.get("embeddings.relative_bias.weight", {block.t5Buckets, s.heads});
    const int stored = block.actSteps > 0 ? 1 : s.layers;
    for (int i = 0; i < stored; ++i)
        w.layers.push_back(readLayer(r, i, s));
    if (block.actSteps > 0) w.halting = r.linear("act.halting", 1, s.hidden);
    if (block.placement == BlockSpec::Placement::Pre &&
        block.residual != BlockSpec::Residual::ReZero)
        w.finalNorm = norm(r, "final_norm", s);
    return w;
}
} // namespace headlight
