#include "analysis/sae_hook.h"

#include <regex>
#include <stdexcept>

namespace headlight::analysis {
namespace {

using Point = SaeHook::Point;

std::string supportedHooks(int layers) {
    return "the supported hooks are blocks.L.hook_resid_pre, hook_resid_mid, hook_resid_post, "
           "hook_attn_out, hook_mlp_out and blocks.L.attn.hook_z (or Gemma Scope 2's "
           "model.layers.L names), L from 0 to " +
           std::to_string(layers - 1);
}

struct HookPattern {
    const char* pattern;
    Point point;
    bool needsSandwich; // names a Gemma 2/3 norm on a sub-layer's output
};

// Where post_attention_layernorm is: Gemma's on attention's output, Llama's before the MLP.
Point postAttentionNormPoint(bool sandwichNorms) {
    return sandwichNorms ? Point::AttnOut : Point::MlpIn;
}

SaeHook matchHook(const std::string& name, bool sandwichNorms, int layers) {
    // Why not static: where post_attention_layernorm is depends on the model.
    const HookPattern patterns[] = {
        {R"(blocks\.([0-9]{1,6})\.hook_resid_pre)", Point::ResidPre, false},
        {R"(blocks\.([0-9]{1,6})\.hook_resid_mid)", Point::ResidMid, false},
        {R"(blocks\.([0-9]{1,6})\.hook_resid_post)", Point::ResidPost, false},
        {R"(blocks\.([0-9]{1,6})\.hook_attn_out)", Point::AttnOut, false},
        {R"(blocks\.([0-9]{1,6})\.hook_mlp_out)", Point::MlpOut, false},
        {R"(blocks\.([0-9]{1,6})\.attn\.hook_z)", Point::AttnZ, false},
        {R"(model\.layers\.([0-9]{1,6})\.output)", Point::ResidPost, false},
        {R"(model\.layers\.([0-9]{1,6})\.self_attn\.o_proj\.input)", Point::AttnZ, false},
        {R"(model\.layers\.([0-9]{1,6})\.post_feedforward_layernorm\.output)", Point::MlpOut, true},
        {R"(model\.layers\.([0-9]{1,6})\.pre_feedforward_layernorm\.output)", Point::MlpIn, true},
        {R"(model\.layers\.([0-9]{1,6})\.post_attention_layernorm\.output)",
         postAttentionNormPoint(sandwichNorms), false},
    };
    std::smatch match;
    for (const HookPattern& p : patterns) {
        if (!std::regex_match(name, match, std::regex(p.pattern))) continue;
        if (p.needsSandwich && !sandwichNorms)
            throw std::invalid_argument(
                "the SAE reads " + name +
                ", a norm only Gemma 2 and 3 blocks have: " + supportedHooks(layers));
        return {p.point, std::stoi(match[1].str())};
    }
    throw std::invalid_argument("the SAE reads hook \"" + name +
                                "\", which Headlight does not capture: " + supportedHooks(layers));
}

bool isSublayerPoint(Point point) {
    return point != Point::ResidPre && point != Point::ResidPost && point != Point::AttnZ;
}

const Tensor& sublayerTensor(const LayerTrace& layer, Point point) {
    switch (point) {
    case Point::ResidMid:
        return layer.residualMid;
    case Point::AttnOut:
        return layer.attentionOutput;
    case Point::MlpOut:
        return layer.mlpOutput;
    default:
        return layer.mlpInput;
    }
}

// [H, T, d] → [T, H·d]: the heads side by side, as W_O reads them.
Tensor headsSideBySide(const Tensor& perHead) {
    const int64_t heads = perHead.dim(0), tokens = perHead.dim(1), d = perHead.dim(2);
    Tensor out({tokens, heads * d});
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t t = 0; t < tokens; ++t)
            for (int64_t i = 0; i < d; ++i)
                out.data()[(t * heads + h) * d + i] = perHead.data()[(h * tokens + t) * d + i];
    return out;
}

Tensor layerActivations(const Trace& trace, const SaeHook& hook) {
    if (std::size_t(hook.layer) >= trace.layers.size())
        throw std::invalid_argument("the pass kept no layer " + std::to_string(hook.layer));
    const LayerTrace& layer = trace.layers[std::size_t(hook.layer)];
    const Tensor& found =
        hook.point == Point::AttnZ ? layer.headOutputs : sublayerTensor(layer, hook.point);
    if (found.empty())
        throw std::invalid_argument(
            "the model's blocks give no such tensor at this hook (only pre-norm blocks of one "
            "residual stream do: not post-norm, parallel, ReZero or GTrXL ones)");
    return hook.point == Point::AttnZ ? headsSideBySide(found) : found;
}
} // namespace

SaeHook parseSaeHook(const std::string& name, int layers, bool sandwichNorms) {
    if (name.size() > 200)
        throw std::invalid_argument(
            "the SAE reads hook \"" + name.substr(0, 200) +
            "\", which Headlight does not capture: " + supportedHooks(layers));
    const SaeHook hook = matchHook(name, sandwichNorms, layers);
    if (hook.layer >= layers)
        throw std::invalid_argument("the SAE reads " + name + " but the model has " +
                                    std::to_string(layers) + " blocks: " + supportedHooks(layers));
    return hook;
}

CaptureRequest captureForHook(const SaeHook& hook, int layers) {
    CaptureRequest capture;
    capture.probabilities = false;
    if (hook.point == Point::AttnZ || isSublayerPoint(hook.point)) {
        capture.layers = {hook.layer};
        capture.headOutputs = hook.point == Point::AttnZ;
        capture.sublayers = hook.point != Point::AttnZ;
        return capture;
    }
    const bool last = hook.point == Point::ResidPost && hook.layer == layers - 1;
    capture.residualBeforeFinalNorm = last;
    capture.hiddenStates = !last;
    return capture;
}

Tensor activationsAtHook(const Trace& trace, const SaeHook& hook, int layers) {
    if (trace.layersRun != layers)
        throw std::invalid_argument("the pass ran " + std::to_string(trace.layersRun) + " of " +
                                    std::to_string(layers) +
                                    " blocks (a model whose depth varies): SAE hooks need all");
    if (hook.point == Point::AttnZ || isSublayerPoint(hook.point))
        return layerActivations(trace, hook);
    if (hook.point == Point::ResidPost && hook.layer == layers - 1) {
        if (trace.residualBeforeFinalNorm.empty())
            throw std::invalid_argument("the pass gave no residual before the final norm");
        return trace.residualBeforeFinalNorm;
    }
    const auto index = std::size_t(hook.point == Point::ResidPre ? hook.layer : hook.layer + 1);
    if (trace.hiddenStates.size() != std::size_t(layers) + 1)
        throw std::invalid_argument("the pass gave " + std::to_string(trace.hiddenStates.size()) +
                                    " hidden states for " + std::to_string(layers) +
                                    " blocks (a model whose depth varies): SAE hooks need one "
                                    "per block");
    return trace.hiddenStates[index];
}
} // namespace headlight::analysis
