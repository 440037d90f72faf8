#include "variants/adaptive_computation_time.h"

#include "variants/position_bias.h"

#include <algorithm>
#include <vector>

namespace headlight::variants {
namespace {

// Every token's running sums P (halted), R (remainder) and N (updates), and the per-step record.
struct Halting {
    Halting(int64_t tokens, int64_t steps)
        : tokens(tokens)
        , halted(std::size_t(tokens), 0.0f)
        , remainder(std::size_t(tokens), 0.0f)
        , updates(std::size_t(tokens), 0.0f)
        , probabilities({steps, tokens})
        , weights({steps, tokens}) {}

    bool allHalted() const {
        return std::all_of(halted.begin(), halted.end(), [](float p) { return p >= 1.0f; });
    }

    // Step t's weight w [T, 1] from its halting probabilities p.
    Tensor weigh(const Tensor& p, int64_t t, bool lastStep, float threshold) {
        Tensor w({tokens, 1});
        for (int64_t i = 0; i < tokens; ++i) {
            const std::size_t k = std::size_t(i);
            const float pi = p.values()[k];
            const bool running = halted[k] < 1.0f;
            const bool halts = running && (halted[k] + pi > threshold || lastStep);
            const bool continues = running && !halts;
            if (continues) halted[k] += pi;
            if (halts) remainder[k] = 1.0f - halted[k], halted[k] = 1.0f;
            updates[k] += float(continues || halts);
            w.values()[k] = continues ? pi : halts ? remainder[k] : 0.0f;
            probabilities.values()[std::size_t((t - 1) * tokens + i)] = running ? pi : 0.0f;
            weights.values()[std::size_t((t - 1) * tokens + i)] = w.values()[k];
        }
        return w;
    }

    std::map<std::string, Tensor> internals(int64_t run) const {
        const auto firstRows = [&](const Tensor& t) {
            return Tensor({run, tokens}, std::vector<float>(t.values().begin(),
                                                            t.values().begin() + run * tokens));
        };
        Tensor ponder({tokens}), rest({tokens});
        for (int64_t i = 0; i < tokens; ++i) {
            ponder.values()[std::size_t(i)] = updates[std::size_t(i)] + remainder[std::size_t(i)];
            rest.values()[std::size_t(i)] = remainder[std::size_t(i)];
        }
        return {{"halting_probability", firstRows(probabilities)},
                {"update_weight", firstRows(weights)},
                {"ponder", ponder},
                {"remainder", rest}};
    }

    int64_t tokens;
    std::vector<float> halted, remainder, updates;
    Tensor probabilities, weights; // [steps, T]
};

// s + positions + timestep(t), the step's input.
DeviceTensor signalled(Backend& backend, const DeviceTensor& state, const DeviceTensor& positions,
                       const Tensor& timing, int64_t t) {
    const int64_t width = state.dim(1);
    DeviceTensor signal = backend.allocate(state.shape());
    backend.add(state, positions, signal);
    const std::vector<float> row(timing.values().begin() + t * width,
                                 timing.values().begin() + (t + 1) * width);
    backend.add(signal, backend.upload(Tensor({1, width}, row)), signal);
    return signal;
}

// p = σ(s·w_h + b_h) [T, 1], on the host.
Tensor haltingProbabilities(Backend& backend, const AdaptiveComputation& act,
                            const DeviceTensor& signal) {
    DeviceTensor logit = backend.allocate({signal.dim(0), 1});
    backend.linear(signal, act.haltingWeight, act.haltingBias.valid() ? &act.haltingBias : nullptr,
                   logit);
    backend.map(logit, MapOp::Sigmoid, 1.0f, 0.0f, logit);
    return backend.download(logit);
}
} // namespace

AdaptiveOutcome adaptiveComputation(Backend& backend, const AdaptiveComputation& act,
                                    const DeviceTensor& x, const StepFunction& step) {
    const int64_t tokens = x.dim(0), steps = act.maxSteps;
    const DeviceTensor positions = backend.upload(sinusoidalTable(tokens, x.dim(1)));
    const Tensor timing = sinusoidalTable(steps + 1, x.dim(1));
    Halting halting(tokens, steps);
    AdaptiveOutcome outcome;
    outcome.out = backend.allocate(x.shape());
    backend.map(x, MapOp::Affine, 0.0f, 0.0f, outcome.out);
    DeviceTensor state = x;
    for (int64_t t = 1; t <= steps && !halting.allHalted(); ++t) {
        outcome.steps = int(t);
        const DeviceTensor signal = signalled(backend, state, positions, timing, t);
        const Tensor w =
            halting.weigh(haltingProbabilities(backend, act, signal), t, t == steps, act.threshold);
        state = step(int(t - 1), signal);
        DeviceTensor change = backend.allocate(x.shape());
        backend.binary(state, outcome.out, BinaryOp::Sub, change);
        backend.binary(change, backend.upload(w), BinaryOp::Mul, change);
        backend.add(outcome.out, change, outcome.out);
    }
    outcome.internals = halting.internals(outcome.steps);
    return outcome;
}
} // namespace headlight::variants
