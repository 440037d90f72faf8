// Depth: the layer stack (with early exit), the Universal Transformer's adaptive computation time
// and reversible residual layers. Formulas: docs/zoo-format.md.
#include <algorithm>
#include <cmath>

#include "model/transformer.h"
#include "variants/position_bias.h"

namespace headlight {

int TransformerModel::capturedLayers() const { return block_.actSteps > 0 ? block_.actSteps : spec_.layers; }

DeviceTensor TransformerModel::runStack(DeviceTensor x, Pass& pass, std::vector<PendingCapture>& pending,
                                        std::vector<DeviceTensor>* hidden,
                                        std::optional<variants::ExitTracker>& exits, Trace&) const {
    DeviceTensor layerInput = x;
    for (const Sublayer& sublayer : sublayerPlan(pass.variant)) {
        x = applySublayer(sublayer, x, pass, pending[std::size_t(sublayer.layer)]);
        if (!sublayer.endsLayer) continue;
        if (exits) trackExits(*exits, sublayer.layer, layerInput, x);
        if (hidden) hidden->push_back(x);
        layerInput = x;
    }
    return x;
}

// Universal Transformer with ACT (Dehghani et al. 2019; Graves 2016), as tensor2tensor runs it
// with a forced stop at the last step: every step adds the position and timestep signals, asks
// the halting unit for p, applies the shared layer and blends the new state into the output with
// the token's weight for this step (p while running, the remainder when halting).
DeviceTensor TransformerModel::runAdaptiveComputation(DeviceTensor x, Pass& pass, std::vector<PendingCapture>& pending,
                                                      Trace& trace) const {
    const int64_t tokens = x.dim(0), steps = block_.actSteps;
    const float threshold = block_.actThreshold;
    const DeviceTensor positions = backend_.upload(variants::sinusoidalTable(tokens, spec_.hidden));
    const Tensor timing = variants::sinusoidalTable(steps + 1, spec_.hidden);
    std::vector<float> halted(std::size_t(tokens), 0.0f), remainder(std::size_t(tokens), 0.0f),
        updates(std::size_t(tokens), 0.0f);
    Tensor probabilities({steps, tokens}), weights({steps, tokens});
    DeviceTensor out = backend_.allocate(x.shape());
    backend_.map(x, MapOp::Affine, 0.0f, 0.0f, out);
    DeviceTensor state = x;
    int64_t run = 0;
    for (int64_t t = 1; t <= steps; ++t) {
        if (std::all_of(halted.begin(), halted.end(), [](float p) { return p >= 1.0f; })) break;
        run = t;
        DeviceTensor signal = backend_.allocate(x.shape());
        backend_.add(state, positions, signal);
        const std::vector<float> row(timing.values().begin() + t * spec_.hidden,
                                     timing.values().begin() + (t + 1) * spec_.hidden);
        backend_.add(signal, backend_.upload(Tensor({1, spec_.hidden}, row)), signal);
        DeviceTensor logit = backend_.allocate({tokens, 1});
        project(halting_, signal, logit);
        backend_.map(logit, MapOp::Sigmoid, 1.0f, 0.0f, logit);
        const Tensor p = backend_.download(logit);
        Tensor w({tokens, 1});
        for (int64_t i = 0; i < tokens; ++i) {
            const std::size_t k = std::size_t(i);
            const float pi = p.values()[k];
            const bool running = halted[k] < 1.0f;
            const bool halts = running && (halted[k] + pi > threshold || t == steps);
            const bool continues = running && !halts;
            if (continues) halted[k] += pi;
            if (halts) remainder[k] = 1.0f - halted[k], halted[k] = 1.0f;
            updates[k] += float(continues || halts);
            w.values()[k] = continues ? pi : halts ? remainder[k] : 0.0f;
            probabilities.values()[std::size_t((t - 1) * tokens + i)] = running ? pi : 0.0f;
            weights.values()[std::size_t((t - 1) * tokens + i)] = w.values()[k];
        }
        PendingCapture& capture = pending[std::size_t(t - 1)];
        state = signal;
        for (const Sublayer& sublayer : sublayerPlan(pass.variant)) state = applySublayer(sublayer, state, pass, capture);
        DeviceTensor change = backend_.allocate(x.shape());
        backend_.binary(state, out, BinaryOp::Sub, change);
        backend_.binary(change, backend_.upload(w), BinaryOp::Mul, change);
        backend_.add(out, change, out);
    }
    // Only the steps that ran are layers of the trace (every token may halt before max_steps).
    pending.resize(std::size_t(run));
    trace.layers.resize(std::size_t(run));
    const auto firstRows = [&](const Tensor& t) {
        return Tensor({run, tokens}, std::vector<float>(t.values().begin(), t.values().begin() + run * tokens));
    };
    trace.internals["halting_probability"] = firstRows(probabilities);
    trace.internals["update_weight"] = firstRows(weights);
    Tensor ponder({tokens}), rest({tokens});
    for (int64_t i = 0; i < tokens; ++i) {
        ponder.values()[std::size_t(i)] = updates[std::size_t(i)] + remainder[std::size_t(i)];
        rest.values()[std::size_t(i)] = remainder[std::size_t(i)];
    }
    trace.internals["ponder"] = ponder;
    trace.internals["remainder"] = rest;
    return out;
}

// Reversible residual layers (RevNet, Gomez et al. 2017; Reformer): y₁ = x₁ + Attn(N₁(x₂)),
// y₂ = x₂ + FFN(N₂(y₁)); the output is (y₁ + y₂)/2. With internals, each layer's inputs are
// recomputed from its outputs and the largest difference reported (exact in theory).
DeviceTensor TransformerModel::runReversible(DeviceTensor x, Pass& pass, std::vector<PendingCapture>& pending,
                                             bool internals, Trace& trace) const {
    DeviceTensor x1 = x, x2 = x;
    Tensor errors({spec_.layers});
    const auto branch = [&](SublayerKind kind, int l, const DeviceTensor& input, PendingCapture& capture) {
        const Layer& layer = layers_[std::size_t(l)];
        DeviceTensor normed = backend_.allocate(input.shape());
        normalize(kind == SublayerKind::Attention ? layer.attentionNorm : layer.ffnNorm, input, normed);
        return sublayerFunction({kind, l, true}, normed, pass, capture);
    };
    for (int l = 0; l < spec_.layers; ++l) {
        PendingCapture& capture = pending[std::size_t(l)];
        DeviceTensor y1 = backend_.allocate(x.shape()), y2 = backend_.allocate(x.shape());
        backend_.add(x1, branch(SublayerKind::Attention, l, x2, capture), y1);
        backend_.add(x2, branch(SublayerKind::Ffn, l, y1, capture), y2);
        if (internals) {
            PendingCapture scratch;
            variants::AttentionMemory memory = pass.memory; // the inverse must not advance the prior
            std::swap(memory, pass.memory);
            DeviceTensor back2 = backend_.allocate(x.shape()), back1 = backend_.allocate(x.shape());
            backend_.binary(y2, branch(SublayerKind::Ffn, l, y1, scratch), BinaryOp::Sub, back2);
            backend_.binary(y1, branch(SublayerKind::Attention, l, back2, scratch), BinaryOp::Sub, back1);
            std::swap(memory, pass.memory);
            const Tensor a1 = backend_.download(x1), a2 = backend_.download(x2), b1 = backend_.download(back1),
                         b2 = backend_.download(back2);
            float worst = 0.0f;
            for (std::size_t i = 0; i < a1.size(); ++i)
                worst = std::max({worst, std::abs(a1.values()[i] - b1.values()[i]), std::abs(a2.values()[i] - b2.values()[i])});
            errors.values()[std::size_t(l)] = worst;
        }
        x1 = y1;
        x2 = y2;
    }
    if (internals) trace.internals["reconstruction_error"] = errors;
    DeviceTensor out = backend_.allocate(x.shape());
    backend_.add(x1, x2, out);
    backend_.map(out, MapOp::Affine, 0.5f, 0.0f, out);
    return out;
}
} // namespace headlight
