// The residual sub-layers of the stack and their parts: norms (LayerNorm, RMSNorm, ScaleNorm,
// AdaNorm), residual kinds (plain post/pre, ReZero, GTrXL gate), sub-layer orders (standard,
// Macaron, Sandwich), the FFN (plain or gated) and the mixture of experts. Formulas and citations:
// docs/zoo-format.md; Hugging Face checkpoints use the plain post/pre cases.
#include <algorithm>
#include <cmath>

#include "model/transformer.h"
#include "variants/seeded_random.h"

namespace headlight {

using variants::BlockSpec;

// Which sub-layer runs in which order, and whose weights it uses.
std::vector<TransformerModel::Sublayer> TransformerModel::sublayerPlan(const variants::VariantSpec& variant) const {
    const int layers = int(layers_.size());
    const bool ffn = !variant.dropFfn;
    std::vector<Sublayer> plan;
    if (block_.order == BlockSpec::Order::Sandwich) {
        // a^k (af)^(L−k) f^k: the i-th attention and the j-th FFN use layers i and j.
        const int k = std::min(block_.sandwich, layers);
        std::vector<SublayerKind> kinds(std::size_t(k), SublayerKind::Attention);
        for (int i = 0; i < layers - k; ++i) kinds.insert(kinds.end(), {SublayerKind::Attention, SublayerKind::Ffn});
        kinds.insert(kinds.end(), std::size_t(k), SublayerKind::Ffn);
        int attention = 0, feedForward = 0;
        for (std::size_t i = 0; i < kinds.size(); ++i) {
            const bool isAttention = kinds[i] == SublayerKind::Attention;
            if (!isAttention && !ffn) continue;
            plan.push_back({kinds[i], isAttention ? attention++ : feedForward++, ffn ? i % 2 == 1 : true});
        }
        return plan;
    }
    for (int l = 0; l < layers; ++l) {
        if (block_.order == BlockSpec::Order::Macaron && ffn) plan.push_back({SublayerKind::FfnPre, l, false});
        plan.push_back({SublayerKind::Attention, l, !ffn});
        if (ffn) plan.push_back({SublayerKind::Ffn, l, true});
    }
    return plan;
}

void TransformerModel::normalize(const Norm& norm, const DeviceTensor& x, DeviceTensor& out) const {
    switch (block_.norm) {
    case BlockSpec::Norm::Layer: backend_.layerNorm(x, norm.gamma, norm.beta, spec_.normEps, out); return;
    case BlockSpec::Norm::Rms: backend_.rmsNorm(x, norm.gamma, spec_.normEps, out); return;
    case BlockSpec::Norm::Scale: {
        // g·x / √(‖x‖² + eps) (Nguyen & Salazar 2019)
        DeviceTensor squares = backend_.allocate(x.shape());
        backend_.map(x, MapOp::Square, 1.0f, 0.0f, squares);
        DeviceTensor length = backend_.allocate({x.dim(0), 1});
        backend_.reduceRows(squares, true, length);
        backend_.map(length, MapOp::Sqrt, 1.0f, spec_.normEps, length);
        backend_.binary(x, length, BinaryOp::Div, out);
        backend_.map(out, MapOp::Affine, norm.scale, 0.0f, out);
        return;
    }
    case BlockSpec::Norm::Ada: {
        // C(1 − k·y) ⊙ y, y = (x − μ)/σ, k = 0.1, C = 1, no parameters (Xu et al. 2019)
        constexpr float k = 0.1f, c = 1.0f;
        DeviceTensor y = backend_.allocate(x.shape());
        backend_.layerNorm(x, ones_, zeros_, spec_.normEps, y);
        backend_.map(y, MapOp::Affine, -c * k, c, out);
        backend_.binary(out, y, BinaryOp::Mul, out);
        return;
    }
    }
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

namespace {
struct Routed {
    std::vector<std::vector<int32_t>> tokens;  // per expert
    std::vector<std::vector<float>> weights;   // per expert
    Tensor choice, weight;                     // [T, k]
};

// top_k (GShard): the k largest softmax gates, renormalised to sum 1; switch: the top gate with its
// probability as weight (Fedus et al. 2021).
Routed routeBySoftmax(const Tensor& logits, const BlockSpec& block) {
    const int64_t tokens = logits.dim(0), experts = logits.dim(1);
    const int k = block.routing == BlockSpec::Routing::Switch ? 1 : block.topK;
    Routed routed{std::vector<std::vector<int32_t>>(std::size_t(experts)),
                  std::vector<std::vector<float>>(std::size_t(experts)), Tensor({tokens, k}), Tensor({tokens, k})};
    for (int64_t t = 0; t < tokens; ++t) {
        const float* row = logits.values().data() + t * experts;
        const float top = *std::max_element(row, row + experts);
        std::vector<double> p(static_cast<std::size_t>(experts));
        double sum = 0.0;
        for (int64_t e = 0; e < experts; ++e) sum += p[std::size_t(e)] = std::exp(double(row[e] - top));
        std::vector<int> order(static_cast<std::size_t>(experts));
        for (int e = 0; e < int(experts); ++e) order[std::size_t(e)] = e;
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[std::size_t(a)] > p[std::size_t(b)]; });
        double chosen = 0.0;
        for (int i = 0; i < k; ++i) chosen += p[std::size_t(order[std::size_t(i)])];
        for (int i = 0; i < k; ++i) {
            const int e = order[std::size_t(i)];
            const double w = block.routing == BlockSpec::Routing::Switch ? p[std::size_t(e)] / sum
                                                                        : p[std::size_t(e)] / chosen;
            routed.tokens[std::size_t(e)].push_back(int32_t(t));
            routed.weights[std::size_t(e)].push_back(float(w));
            routed.choice.values()[std::size_t(t * k + i)] = float(e);
            routed.weight.values()[std::size_t(t * k + i)] = float(w);
        }
    }
    return routed;
}

// Hash layers (Roller et al. 2021): a fixed hash of the token id picks the expert, weight 1.
Routed routeByHash(const std::vector<int32_t>& ids, int experts) {
    const int64_t tokens = int64_t(ids.size());
    Routed routed{std::vector<std::vector<int32_t>>(std::size_t(experts)),
                  std::vector<std::vector<float>>(std::size_t(experts)), Tensor({tokens, 1}), Tensor({tokens, 1}, 1.0f)};
    for (int64_t t = 0; t < tokens; ++t) {
        variants::SeededRandom hash(uint64_t(uint32_t(ids[std::size_t(t)])));
        const int e = int(hash.next() % uint64_t(experts));
        routed.tokens[std::size_t(e)].push_back(int32_t(t));
        routed.weights[std::size_t(e)].push_back(1.0f);
        routed.choice.values()[std::size_t(t)] = float(e);
    }
    return routed;
}
} // namespace

// Mixture of experts: each token's chosen experts run on it and their outputs are summed with the
// routing weights. No capacity limit, so no token is dropped.
DeviceTensor TransformerModel::mixtureOfExperts(const Layer& layer, const DeviceTensor& x, const Pass& pass,
                                                PendingCapture& capture) const {
    const int experts = int(layer.experts.size());
    Routed routed;
    if (block_.routing == BlockSpec::Routing::Hash) {
        routed = routeByHash(pass.input.ids, experts);
    } else {
        DeviceTensor logits = backend_.allocate({x.dim(0), experts});
        backend_.linear(x, layer.router, nullptr, logits);
        const Tensor hostLogits = backend_.download(logits);
        routed = routeBySoftmax(hostLogits, block_);
        if (pass.wants.internals) capture.hostInternals["router_logits"] = hostLogits;
    }
    if (pass.wants.internals) {
        capture.hostInternals["expert_choice"] = routed.choice;
        capture.hostInternals["expert_weight"] = routed.weight;
    }
    DeviceTensor out = backend_.allocate(x.shape());
    backend_.map(x, MapOp::Affine, 0.0f, 0.0f, out);
    for (int e = 0; e < experts; ++e) {
        const auto& ids = routed.tokens[std::size_t(e)];
        if (ids.empty()) continue;
        DeviceTensor rows = backend_.allocate({int64_t(ids.size()), spec_.hidden});
        backend_.gatherRows(x, ids, rows);
        backend_.scatterAddRows(feedForward(layer.experts[std::size_t(e)], rows), ids, routed.weights[std::size_t(e)],
                                out);
    }
    return out;
}

// F(x) of one sub-layer: attention, the FFN (or the experts), or Macaron's first FFN; Macaron's
// FFNs are half steps.
DeviceTensor TransformerModel::sublayerFunction(const Sublayer& sublayer, const DeviceTensor& x, Pass& pass,
                                                PendingCapture& capture) const {
    const Layer& layer = layers_[std::size_t(sublayer.layer)];
    if (sublayer.kind == SublayerKind::Attention) return attend(layer, sublayer.layer, x, pass, capture);
    DeviceTensor y = sublayer.kind == SublayerKind::FfnPre ? feedForward(layer.ffnPre, x)
                     : layer.experts.empty()               ? feedForward(layer.ffn, x)
                                                           : mixtureOfExperts(layer, x, pass, capture);
    if (block_.order == BlockSpec::Order::Macaron) backend_.map(y, MapOp::Affine, 0.5f, 0.0f, y);
    return y;
}

// x ← the sub-layer's residual update: post N(x + F(x)), pre x + F(N(x)), ReZero x + α·F(x),
// GTrXL gate(x, F(N(x))).
DeviceTensor TransformerModel::applySublayer(const Sublayer& sublayer, const DeviceTensor& x, Pass& pass,
                                             PendingCapture& capture) const {
    const Layer& layer = layers_[std::size_t(sublayer.layer)];
    const Norm& norm = sublayer.kind == SublayerKind::Attention ? layer.attentionNorm
                       : sublayer.kind == SublayerKind::Ffn     ? layer.ffnNorm
                                                                : layer.ffnPreNorm;
    DeviceTensor out = backend_.allocate(x.shape());
    if (block_.residual == BlockSpec::Residual::ReZero) {
        const float alpha = sublayer.kind == SublayerKind::Attention ? layer.rezeroAttention
                            : sublayer.kind == SublayerKind::Ffn     ? layer.rezeroFfn
                                                                     : layer.rezeroFfnPre;
        DeviceTensor y = sublayerFunction(sublayer, x, pass, capture);
        backend_.map(y, MapOp::Affine, alpha, 0.0f, y);
        backend_.add(x, y, out);
        return out;
    }
    if (block_.placement == BlockSpec::Placement::Post) {
        backend_.add(x, sublayerFunction(sublayer, x, pass, capture), out);
        normalize(norm, out, out);
        return out;
    }
    DeviceTensor normed = backend_.allocate(x.shape());
    normalize(norm, x, normed);
    // Funnel: the pooling attention's unpooled keys and values pass through the same norm.
    if (pass.funnelKeys.valid()) {
        DeviceTensor keys = backend_.allocate(pass.funnelKeys.shape());
        normalize(norm, pass.funnelKeys, keys);
        pass.funnelKeys = keys;
    }
    const DeviceTensor y = sublayerFunction(sublayer, normed, pass, capture);
    if (block_.residual == BlockSpec::Residual::Gtrxl)
        return gate(sublayer.kind == SublayerKind::Attention ? layer.gateAttention : layer.gateFfn, x, y);
    backend_.add(x, y, out);
    return out;
}
} // namespace headlight
