#include "variants/reversible_layers.h"

#include <algorithm>
#include <cmath>

namespace headlight::variants {
namespace {

// The largest |a − b| over both streams.
float largestDifference(Backend& backend, const DeviceTensor& a1, const DeviceTensor& b1,
                        const DeviceTensor& a2, const DeviceTensor& b2) {
    const Tensor x1 = backend.download(a1), x2 = backend.download(a2), y1 = backend.download(b1),
                 y2 = backend.download(b2);
    float worst = 0.0f;
    for (std::size_t i = 0; i < x1.size(); ++i)
        worst = std::max({worst, std::abs(x1.values()[i] - y1.values()[i]),
                          std::abs(x2.values()[i] - y2.values()[i])});
    return worst;
}

// max |x − x̂| of layer `l`, recomputing its inputs x₁, x₂ from its outputs y₁, y₂.
float reconstructionError(Backend& backend, int l, const DeviceTensor& x1, const DeviceTensor& x2,
                          const DeviceTensor& y1, const DeviceTensor& y2,
                          const ReversibleBranch& branch) {
    DeviceTensor back2 = backend.allocate(x1.shape()), back1 = backend.allocate(x1.shape());
    backend.binary(y2, branch(l, false, y1, true), BinaryOp::Sub, back2);
    backend.binary(y1, branch(l, true, back2, true), BinaryOp::Sub, back1);
    return largestDifference(backend, x1, back1, x2, back2);
}
} // namespace

ReversibleOutcome reversibleLayers(Backend& backend, int layers, const DeviceTensor& x,
                                   bool measure, const ReversibleBranch& branch) {
    DeviceTensor x1 = x, x2 = x;
    ReversibleOutcome outcome;
    Tensor errors({layers});
    for (int l = 0; l < layers; ++l) {
        DeviceTensor y1 = backend.allocate(x.shape()), y2 = backend.allocate(x.shape());
        backend.add(x1, branch(l, true, x2, false), y1);
        backend.add(x2, branch(l, false, y1, false), y2);
        if (measure)
            errors.values()[std::size_t(l)] =
                reconstructionError(backend, l, x1, x2, y1, y2, branch);
        x1 = y1;
        x2 = y2;
    }
    if (measure) outcome.reconstructionError = errors;
    outcome.out = backend.allocate(x.shape());
    backend.add(x1, x2, outcome.out);
    backend.map(outcome.out, MapOp::Affine, 0.5f, 0.0f, outcome.out);
    return outcome;
}
} // namespace headlight::variants
