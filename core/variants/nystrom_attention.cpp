// Nyström attention (catalogue A5.2; Nyströmformer, Xiong et al. 2021): with m landmark queries
// Q̃ and keys K̃ (segment means),
//   Ã = softmax(s·QK̃ᵀ) · pinv(softmax(s·Q̃K̃ᵀ)) · softmax(s·Q̃Kᵀ),   s = the layer's scale,
// and context = F (Z (B V)) with F, Z, B those three factors: O(T·m·d + m³), no T × T matrix.
//
// Landmarks: m = min(landmarks, n) contiguous segments of the n non-padding tokens (segment s
// holds kept tokens ⌊s·n/m⌋ … ⌊(s+1)·n/m⌋ − 1, so uneven n is spread evenly); padding keys are
// masked in B and never enter a landmark. With m = n every landmark is one token and Ã = A A⁺ A =
// A. pinv: Nyströmformer's iteration (Razavi et al. 2014), per head, Z₀ = Aᵀ / (‖A‖₁ ‖A‖∞) with
// ‖A‖∞ = 1 for a softmax, Z ← ¼ Z (13I − AZ (15I − AZ (7I − AZ))) `pinvIterations` times
// (Nyströmformer takes the norms over the whole batch; per head is the same when heads agree).
// Landmarks mix tokens from every position, so encoders only (applicability.cpp refuses causal
// models). No random numbers.
//
// Outputs: probabilities = F·Z·B [H, T, T] (rows sum to 1 only as far as Z has converged; entries
// can be negative); no scores. Internals: "landmarks_q", "landmarks_k" [H, m, d] (keys per query
// head).
#include "variants/composed_attention.h"

#include <vector>

namespace headlight::variants {
namespace {

// P [m, T] repeated over `heads`: row s averages the kept tokens of landmark segment s.
Tensor landmarkProjection(const AttentionShape& shape, int landmarks, int64_t heads) {
    std::vector<int64_t> kept;
    for (int64_t t = 0; t < shape.tokens; ++t)
        if (shape.keyMask().valid(t)) kept.push_back(t);
    if (kept.empty()) throw VariantError("Nyström attention needs at least one non-padding token");
    const int64_t n = int64_t(kept.size()), m = std::min<int64_t>(landmarks, n),
                  tokens = shape.tokens;
    Tensor projection({heads, m, tokens}, 0.0f);
    for (int64_t s = 0; s < m; ++s) {
        const int64_t begin = s * n / m, end = (s + 1) * n / m;
        for (int64_t i = begin; i < end; ++i)
            for (int64_t h = 0; h < heads; ++h)
                projection.values()[std::size_t((h * m + s) * tokens + kept[std::size_t(i)])] =
                    1.0f / float(end - begin);
    }
    return projection;
}

// [1, T] with 1 for the keys a landmark query may see; invalid when every key is valid.
DeviceTensor keyMask(Backend& backend, const AttentionShape& shape) {
    if (shape.keyValid.empty()) return {};
    Tensor mask({1, shape.tokens});
    for (int64_t t = 0; t < shape.tokens; ++t)
        mask.values()[std::size_t(t)] = shape.keyMask().valid(t) ? 1.0f : 0.0f;
    return backend.upload(mask);
}

DeviceTensor product(Backend& backend, const DeviceTensor& a, const DeviceTensor& b,
                     bool transposeB, float alpha) {
    DeviceTensor out = backend.allocate({a.dim(0), a.dim(1), transposeB ? b.dim(1) : b.dim(2)});
    backend.matmul(a, b, transposeB, alpha, out);
    return out;
}

DeviceTensor softmaxOf(Backend& backend, DeviceTensor logits, const DeviceTensor& mask) {
    backend.softmax(logits, mask.valid() ? &mask : nullptr, logits);
    return logits;
}

// c·I [m, m], which binary Add tiles over every head.
DeviceTensor scaledIdentity(Backend& backend, int64_t m, float c) {
    Tensor identity({m, m}, 0.0f);
    for (int64_t i = 0; i < m; ++i)
        identity.values()[std::size_t(i * m + i)] = c;
    return backend.upload(identity);
}

// c·I − x for x [H, m, m].
DeviceTensor shifted(Backend& backend, const DeviceTensor& x, const DeviceTensor& scaledI) {
    DeviceTensor out = backend.allocate(x.shape());
    backend.map(x, MapOp::Affine, -1.0f, 0.0f, out);
    backend.binary(out, scaledI, BinaryOp::Add, out);
    return out;
}

// Z₀ = Aᵀ / max column sum of A, per head (Aᵀ as I·Aᵀ: the op set has no transpose).
DeviceTensor initialInverse(Backend& backend, const DeviceTensor& a, const DeviceTensor& identity) {
    const int64_t heads = a.dim(0), m = a.dim(1);
    DeviceTensor z = backend.allocate(a.shape());
    backend.matmul(identity, a, true, 1.0f, z);
    DeviceTensor columnSums = backend.allocate({heads * m, 1});
    backend.reduceRows(z, true, columnSums);
    DeviceTensor norms = backend.allocate({heads, 1});
    backend.reduceRows(columnSums.reshaped({heads, m}), false, norms);
    DeviceTensor flat = z.reshaped({heads, m * m});
    backend.binary(flat, norms, BinaryOp::Div, flat);
    return z;
}

DeviceTensor pseudoInverse(Backend& backend, const DeviceTensor& a, int iterations) {
    const int64_t heads = a.dim(0), m = a.dim(1);
    Tensor identities({heads, m, m}, 0.0f);
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < m; ++i)
            identities.values()[std::size_t((h * m + i) * m + i)] = 1.0f;
    DeviceTensor z = initialInverse(backend, a, backend.upload(identities));
    const DeviceTensor seven = scaledIdentity(backend, m, 7.0f),
                       fifteen = scaledIdentity(backend, m, 15.0f),
                       thirteen = scaledIdentity(backend, m, 13.0f);
    for (int i = 0; i < iterations; ++i) {
        const DeviceTensor az = product(backend, a, z, false, 1.0f);
        const DeviceTensor inner = product(backend, az, shifted(backend, az, seven), false, 1.0f);
        const DeviceTensor middle =
            product(backend, az, shifted(backend, inner, fifteen), false, 1.0f);
        z = product(backend, z, shifted(backend, middle, thirteen), false, 0.25f);
    }
    return z;
}
} // namespace

AttentionOutputs nystromAttention(Backend& backend, const LayerAttention& layer,
                                  const VariantSpec& spec, const AttentionPlan& plan,
                                  const AttentionWants& wants) {
    const int64_t heads = layer.q.dim(0);
    const DeviceTensor projection =
        backend.upload(landmarkProjection(plan.shape, spec.landmarks, heads));
    const DeviceTensor landmarkQ = product(backend, projection, layer.q, false, 1.0f);
    const DeviceTensor landmarkK = product(backend, projection, layer.k, false, 1.0f);
    const DeviceTensor toLandmarks =
        softmaxOf(backend, product(backend, layer.q, landmarkK, true, layer.scale), {});
    const DeviceTensor kernel =
        softmaxOf(backend, product(backend, landmarkQ, landmarkK, true, layer.scale), {});
    const DeviceTensor fromLandmarks =
        softmaxOf(backend, product(backend, landmarkQ, layer.k, true, layer.scale),
                  keyMask(backend, plan.shape));
    const DeviceTensor inverse = pseudoInverse(backend, kernel, spec.pinvIterations);
    const DeviceTensor landmarkValues = product(backend, fromLandmarks, layer.v, false, 1.0f);
    AttentionOutputs out;
    out.context = product(backend, toLandmarks,
                          product(backend, inverse, landmarkValues, false, 1.0f), false, 1.0f);
    if (wants.probabilities)
        out.probabilities = product(backend, product(backend, toLandmarks, inverse, false, 1.0f),
                                    fromLandmarks, false, 1.0f);
    if (wants.internals) {
        out.internals["landmarks_q"] = landmarkQ;
        out.internals["landmarks_k"] = landmarkK;
    }
    return out;
}
} // namespace headlight::variants
