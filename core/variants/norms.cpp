#include "variants/norms.h"

namespace headlight::variants {
namespace {

void scaleNorm(Backend& backend, float eps, float g, const DeviceTensor& x, DeviceTensor& out) {
    DeviceTensor squares = backend.allocate(x.shape());
    backend.map(x, MapOp::Square, 1.0f, 0.0f, squares);
    DeviceTensor length = backend.allocate({x.dim(0), 1});
    backend.reduceRows(squares, true, length);
    backend.map(length, MapOp::Sqrt, 1.0f, eps, length);
    backend.binary(x, length, BinaryOp::Div, out);
    backend.map(out, MapOp::Affine, g, 0.0f, out);
}

void adaNorm(Backend& backend, const Normalization& n, const DeviceTensor& x, DeviceTensor& out) {
    constexpr float k = 0.1f, c = 1.0f;
    DeviceTensor y = backend.allocate(x.shape());
    backend.layerNorm(x, n.ones, n.zeros, n.eps, y);
    backend.map(y, MapOp::Affine, -c * k, c, out);
    backend.binary(out, y, BinaryOp::Mul, out);
}
} // namespace

void normalize(Backend& backend, const Normalization& normalization, const NormWeights& weights,
               const DeviceTensor& x, DeviceTensor& out) {
    const float eps = normalization.eps;
    switch (normalization.kind) {
    case BlockSpec::Norm::Layer:
        backend.layerNorm(x, weights.gamma, weights.beta, eps, out);
        return;
    case BlockSpec::Norm::Rms:
        backend.rmsNorm(x, weights.gamma, eps, out);
        return;
    case BlockSpec::Norm::Scale:
        scaleNorm(backend, eps, weights.scale, x, out);
        return;
    case BlockSpec::Norm::Ada:
        adaNorm(backend, normalization, x, out);
        return;
    }
}
} // namespace headlight::variants
