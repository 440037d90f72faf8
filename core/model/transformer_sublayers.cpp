// The residual wiring of one sub-layer (plain post/pre, ReZero, GTrXL gate) and the functions it
// wraps: attention, the FFN (plain or gated) or the mixture of experts. The norms, the sub-layer
// orders and the experts' routing live in core/variants (norms, sublayer_order,
// mixture_of_experts); formulas and citations: docs/zoo-format.md. Hugging Face checkpoints use
// the plain post/pre cases.
#include "model/transformer.h"
#include "variants/mixture_of_experts.h"

namespace headlight {

using variants::BlockSpec;

void TransformerModel::normalize(const Norm& norm, const DeviceTensor& x, DeviceTensor& out) const {
    variants::normalize(backend_, normalization_, norm, x, out);
}

// GTrXL's gate (Parisotto et al. 2019): r = σ(W_r y + U_r x), z = σ(W_z y + U_z x − b_g),
// ĥ = tanh(W_g y + U_g (r ⊙ x)), out = (1 − z) ⊙ x + z ⊙ ĥ = x + z ⊙ (ĥ − x).
DeviceTensor TransformerModel::gate(const Gate& g, const DeviceTensor& x, const DeviceTensor& y) const {
    const auto sum = [&](const Linear& w, const DeviceTensor& a, const Linear& u, const DeviceTensor& b) {
        DeviceTensor first = backend_.allocate(x.shape()), second = backend_.allocate(x.shape());
        project(w, a, first);
        project(u, b, second);
        backend_.add(first, second, first);
        return first;
    };
    DeviceTensor r = sum(g.wr, y, g.ur, x);
    backend_.map(r, MapOp::Sigmoid, 1.0f, 0.0f, r);
    DeviceTensor z = sum(g.wz, y, g.uz, x);
    backend_.binary(z, g.bias, BinaryOp::Sub, z);
    backend_.map(z, MapOp::Sigmoid, 1.0f, 0.0f, z);
    DeviceTensor gated = backend_.allocate(x.shape());
    backend_.binary(r, x, BinaryOp::Mul, gated);
    DeviceTensor candidate = sum(g.wg, y, g.ug, gated);
    backend_.map(candidate, MapOp::Tanh, 1.0f, 0.0f, candidate);
    backend_.binary(candidate, x, BinaryOp::Sub, candidate);
    backend_.binary(candidate, z, BinaryOp::Mul, candidate);
    DeviceTensor out = backend_.allocate(x.shape());
    backend_.add(x, candidate, out);
    return out;
}

// Position-wise FFN: down(act(up x)), or down(act(gate x) ⊙ up x) for the GLU family
// (Dauphin et al. 2017; Shazeer 2020).
DeviceTensor TransformerModel::feedForward(const Ffn& ffn, const DeviceTensor& x) const {
    const int64_t tokens = x.dim(0), inner = ffn.up.weight.dim(0);
    DeviceTensor hidden = backend_.allocate({tokens, inner});
    project(ffn.up, x, hidden);
    if (ffn.gate.weight.valid()) {
        DeviceTensor g = backend_.allocate({tokens, inner});
        project(ffn.gate, x, g);
        if (block_.activation == "glu") {
            backend_.map(g, MapOp::Sigmoid, 1.0f, 0.0f, g);
            backend_.binary(hidden, g, BinaryOp::Mul, hidden);
        } else {
            backend_.gatedActivation(g, hidden, spec_.activation, hidden);
        }
    } else {
        backend_.activation(hidden, spec_.activation, hidden);
    }
    DeviceTensor out = backend_.allocate({tokens, spec_.hidden});
    project(ffn.down, hidden, out);
    return out;
}

// F(x) of one sub-layer: attention, the FFN (or the experts), or Macaron's first FFN.
DeviceTensor TransformerModel::sublayerFunction(const Sublayer& sublayer, const DeviceTensor& x,
                                                Pass& pass, PendingCapture& capture) const {
    const Layer& layer = layers_[std::size_t(sublayer.layer)];
    if (sublayer.kind == SublayerKind::Attention)
        return attend(layer, sublayer.layer, x, pass, capture);
    DeviceTensor y;
    if (sublayer.kind == SublayerKind::FfnPre) {
        y = feedForward(layer.ffnPre, x);
    } else if (layer.experts.empty()) {
        y = feedForward(layer.ffn, x);
    } else {
        const auto expert = [&](int e, const DeviceTensor& rows) {
            return feedForward(layer.experts[std::size_t(e)], rows);
        };
        auto* internals = pass.wants.internals ? &capture.hostInternals : nullptr;
        y = variants::mixtureOfExperts(backend_, block_, {int(layer.experts.size()), layer.router},
                                       pass.input.ids, x, expert, internals);
    }
    variants::scaleFfnStep(backend_, block_, y);
    return y;
}

DeviceTensor TransformerModel::applySublayer(const Sublayer& sublayer, const DeviceTensor& x,
                                             Pass& pass, PendingCapture& capture) const {
    SublayerTaps taps;
    DeviceTensor out = residual(
        sublayer, x,
        [&](const DeviceTensor& normed) {
            return sublayerFunction(sublayer, normed, pass, capture);
        },
        capture.wantSublayers ? &taps : nullptr);
    if (!taps.update.valid()) return out;
    if (sublayer.kind == SublayerKind::Attention) {
        capture.attentionOutput = taps.update;
        capture.residualMid = out;
    } else if (sublayer.kind == SublayerKind::Ffn) {
        capture.mlpInput = taps.input;
        capture.mlpOutput = taps.update;
    }
    return out;
}

// GPT-NeoX (use_parallel_residual) and GPT-J: both sub-layers read the layer's input, and the
// layer's output is input + attention + MLP.
DeviceTensor TransformerModel::applyParallelFfn(const Sublayer& sublayer,
                                                const DeviceTensor& layerInput,
                                                const DeviceTensor& x, Pass& pass,
                                                PendingCapture& capture) const {
    DeviceTensor normed = backend_.allocate(layerInput.shape());
    normalize(sublayerNorm(sublayer), layerInput, normed);
    DeviceTensor out = backend_.allocate(x.shape());
    backend_.add(x, sublayerFunction(sublayer, normed, pass, capture), out);
    return out;
}

DeviceTensor TransformerModel::sublayerInput(const Sublayer& sublayer, const DeviceTensor& x) const {
    if (!normsSublayerInput()) return x;
    DeviceTensor normed = backend_.allocate(x.shape());
    normalize(sublayerNorm(sublayer), x, normed);
    return normed;
}

bool TransformerModel::normsSublayerInput() const {
    return block_.residual != BlockSpec::Residual::ReZero &&
           block_.placement == BlockSpec::Placement::Pre;
}

const TransformerModel::Norm& TransformerModel::sublayerNorm(const Sublayer& sublayer) const {
    const Layer& layer = layers_[std::size_t(sublayer.layer)];
    return sublayer.kind == SublayerKind::Attention ? layer.attentionNorm
           : sublayer.kind == SublayerKind::Ffn     ? layer.ffnNorm
                                                    : layer.ffnPreNorm;
}

// x ← the sub-layer's residual update: post N(x + F(x)), pre x + F(N(x)), ReZero x + α·F(x),
// GTrXL gate(x, F(N(x))).
DeviceTensor TransformerModel::residual(const Sublayer& sublayer, const DeviceTensor& x,
                                        const SublayerFunction& function,
                                        SublayerTaps* taps) const {
    const Layer& layer = layers_[std::size_t(sublayer.layer)];
    DeviceTensor out = backend_.allocate(x.shape());
    if (block_.residual == BlockSpec::Residual::ReZero) {
        const float alpha = sublayer.kind == SublayerKind::Attention ? layer.rezeroAttention
                            : sublayer.kind == SublayerKind::Ffn     ? layer.rezeroFfn
                                                                     : layer.rezeroFfnPre;
        DeviceTensor y = function(x);
        backend_.map(y, MapOp::Affine, alpha, 0.0f, y);
        backend_.add(x, y, out);
        return out;
    }
    if (block_.placement == BlockSpec::Placement::Post) {
        backend_.add(x, function(x), out);
        normalize(sublayerNorm(sublayer), out, out);
        return out;
    }
    DeviceTensor normed = backend_.allocate(x.shape());
    normalize(sublayerNorm(sublayer), x, normed);
    DeviceTensor y = function(normed);
    // Gemma's sandwich: x + N'(F(N(x))), the output norm only where the checkpoint has one.
    const Norm* outputNorm = sublayer.kind == SublayerKind::Attention ? &layer.postAttentionNorm
                             : sublayer.kind == SublayerKind::Ffn     ? &layer.postFfnNorm
                                                                      : nullptr;
    if (outputNorm && outputNorm->gamma.valid()) normalize(*outputNorm, y, y);
    if (block_.residual == BlockSpec::Residual::Gtrxl)
        return gate(sublayer.kind == SublayerKind::Attention ? layer.gateAttention : layer.gateFfn, x, y);
    if (taps) *taps = {normed, y};
    backend_.add(x, y, out);
    return out;
}
} // namespace headlight
