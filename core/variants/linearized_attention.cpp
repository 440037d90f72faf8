// Linearized attention (docs/variants.md, option 4): exp(q·k) replaced by a feature map,
// φ(q)·φ(k), so that
//   z_i = φ(q_i) Σ_j φ(k_j) v_jᵀ / φ(q_i) · Σ_j φ(k_j)
// is computed as φ(Q) (φ(K)ᵀ V) in O(T) (encoders), or in its prefix-sum form with
// Backend::causalLinearAttention (decoders, Katharopoulos et al. 2020 §3.4).
//
//   LinearElu  φ(x) = elu(x) + 1 on the raw q, k (Linear Transformer, Katharopoulos et al. 2020).
//   Favor      FAVOR+ (Choromanski et al. 2020b): x' = x·scale^½, φ(x) = exp(Wx' − ‖x'‖²/2) / √m,
//              so E[φ(q)·φ(k)] = exp(scale·q·k). W [m, d]: with `orthogonal`, blocks of d rows
//              made orthonormal by classical Gram–Schmidt (in order, in double) and row r scaled
//              by the norm of a fresh Gaussian d-vector (Performer's chi-distributed lengths).
//              Constants cancel between numerator and denominator, so queries subtract their row
//              maximum and keys the maximum of their head before exp (Performer's stabiliser).
//              Unlike the authors' code: no ε = 1e-6 inside φ (it would stop the maxima from
//              cancelling), the maxima of the exponent rather than of Wx' alone, and ε = 1e-30
//              on every normaliser (docs/variants.md, tools/zoo/zoo_kernels.py).
//   Rfa        Random feature attention (Peng et al. 2021, with h(x) = 1): q, k
//              ℓ2-normalised, φ(x) = [sin(Wx), cos(Wx)] / √m with W ~ N(0, I) [m, d], so
//              E[φ(q)·φ(k)] = exp(−‖q̂ − k̂‖²/2) ∝ exp(q̂·k̂): it changes the function (σ = 1).
//
// Random numbers: SeededRandom(streamSeed(spec.seed, kFavorPurpose or kRfaPurpose, layer)).
// Favor, orthogonal: ⌈m/d⌉ blocks of d × d normals (row-major, block after block), then m × d
// normals (row-major) whose row norms scale the rows; iid: m × d normals row-major. Rfa: m × d
// normals row-major. Padding keys get φ(k) = 0. Queries whose keys are all masked read zero.
//
// Outputs: probabilities = the row-normalised φ(Q)φ(K)ᵀ, masked (causal, padding); no scores
// (the kernel has no logits). Internals: "features" [m, d] (Favor, Rfa).
#include "variants/composed_attention.h"
#include "variants/kernel_rows.h"
#include "variants/seeded_random.h"

#include <cmath>
#include <numbers>
#include <vector>

namespace headlight::variants {
namespace {

constexpr uint32_t kFavorPurpose = 0x101;
constexpr uint32_t kRfaPurpose = 0x102;
// Linear Transformer's ε; the random-feature kernels need only to avoid 0/0 (their scale is set
// by the stabiliser, so a larger ε would bias early causal rows).
constexpr float kEluEps = 1e-6f;
constexpr float kFeatureEps = 1e-30f;

std::vector<double> normals(SeededRandom& random, std::size_t count) {
    std::vector<double> values(count);
    for (double& v : values)
        v = random.normal();
    return values;
}

// Rows of `block` [d, d] made orthonormal in place, in order.
void gramSchmidt(std::vector<double>& block, int64_t d) {
    for (int64_t r = 0; r < d; ++r) {
        double* row = block.data() + r * d;
        for (int64_t p = 0; p < r; ++p) {
            const double* prev = block.data() + p * d;
            double dot = 0.0;
            for (int64_t c = 0; c < d; ++c)
                dot += row[c] * prev[c];
            for (int64_t c = 0; c < d; ++c)
                row[c] -= dot * prev[c];
        }
        double norm = 0.0;
        for (int64_t c = 0; c < d; ++c)
            norm += row[c] * row[c];
        norm = std::sqrt(norm);
        for (int64_t c = 0; c < d; ++c)
            row[c] /= norm;
    }
}

Tensor orthogonalFeatures(SeededRandom& random, int64_t m, int64_t d) {
    std::vector<double> rows;
    for (int64_t filled = 0; filled < m; filled += d) {
        std::vector<double> block = normals(random, std::size_t(d * d));
        gramSchmidt(block, d);
        rows.insert(rows.end(), block.begin(), block.end());
    }
    const std::vector<double> lengths = normals(random, std::size_t(m * d));
    Tensor w({m, d});
    for (int64_t r = 0; r < m; ++r) {
        double norm = 0.0;
        for (int64_t c = 0; c < d; ++c)
            norm += lengths[std::size_t(r * d + c)] * lengths[std::size_t(r * d + c)];
        for (int64_t c = 0; c < d; ++c)
            w.values()[std::size_t(r * d + c)] =
                float(rows[std::size_t(r * d + c)] * std::sqrt(norm));
    }
    return w;
}

Tensor gaussianFeatures(SeededRandom& random, int64_t m, int64_t d) {
    Tensor w({m, d});
    for (float& v : w.values())
        v = float(random.normal());
    return w;
}

Tensor drawFeatures(const VariantSpec& spec, int layer, int64_t d) {
    const bool favor = spec.kernel == AttentionKernel::Favor;
    SeededRandom random(
        streamSeed(spec.seed, favor ? kFavorPurpose : kRfaPurpose, uint32_t(layer)));
    if (favor && spec.orthogonal) return orthogonalFeatures(random, spec.features, d);
    return gaussianFeatures(random, spec.features, d);
}

// Per-row sums ‖x_r‖² of x [.., n] as [rows, 1].
DeviceTensor squaredNorms(Backend& backend, const DeviceTensor& x) {
    const int64_t rows = x.size() / x.shape().back();
    DeviceTensor squares = backend.allocate(x.shape());
    backend.map(x, MapOp::Square, 1.0f, 0.0f, squares);
    DeviceTensor sums = backend.allocate({rows, 1});
    backend.reduceRows(squares, true, sums);
    return sums;
}

// x [B, T, n] → xW ᵀ [B, T, m] with one feature matrix for every head.
DeviceTensor project(Backend& backend, const DeviceTensor& x, const DeviceTensor& w) {
    DeviceTensor out = backend.allocate({x.dim(0), x.dim(1), w.dim(0)});
    backend.matmul(x, w, true, 1.0f, out);
    return out;
}

// FAVOR+ φ(x) for x [B, T, d]; `perRow` picks the query stabiliser (row max) over the key one
// (head max).
DeviceTensor favorFeatures(Backend& backend, const DeviceTensor& x, const DeviceTensor& w,
                           float scale, bool perRow) {
    const float root = std::sqrt(scale);
    DeviceTensor scaled = backend.allocate(x.shape());
    backend.map(x, MapOp::Affine, root, 0.0f, scaled);
    DeviceTensor logits = project(backend, scaled, w);
    const int64_t rows = x.dim(0) * x.dim(1), m = w.dim(0);
    DeviceTensor halfNorms = squaredNorms(backend, scaled);
    backend.map(halfNorms, MapOp::Affine, 0.5f, 0.0f, halfNorms);
    DeviceTensor flat = logits.reshaped({rows, m});
    backend.binary(flat, halfNorms, BinaryOp::Sub, flat);
    DeviceTensor grouped = perRow ? flat : logits.reshaped({x.dim(0), x.dim(1) * m});
    DeviceTensor maxima = backend.allocate({grouped.dim(0), 1});
    backend.reduceRows(grouped, false, maxima);
    backend.binary(grouped, maxima, BinaryOp::Sub, grouped);
    backend.map(logits, MapOp::Exp, 1.0f, -0.5f * std::log(float(m)), logits);
    return logits;
}

// RFA φ(x) = [sin(Wx̂), cos(Wx̂)] / √m with x̂ = x / ‖x‖: W is stacked twice and the second copy
// shifted by π/2, since cos y = sin(y + π/2).
DeviceTensor rfaFeatures(Backend& backend, const DeviceTensor& x, const DeviceTensor& doubled,
                         const DeviceTensor& phase, int64_t m) {
    const int64_t rows = x.dim(0) * x.dim(1);
    DeviceTensor norms = squaredNorms(backend, x);
    backend.map(norms, MapOp::Sqrt, 1.0f, 0.0f, norms);
    DeviceTensor unit = backend.allocate(x.shape());
    backend.binary(x.reshaped({rows, x.dim(2)}), norms, BinaryOp::Div, unit);
    DeviceTensor features = project(backend, unit, doubled);
    backend.binary(features, phase, BinaryOp::Add, features);
    backend.map(features, MapOp::Sin, 1.0f, 0.0f, features);
    backend.map(features, MapOp::Affine, 1.0f / std::sqrt(float(m)), 0.0f, features);
    return features;
}

struct FeatureMaps {
    DeviceTensor q, k; // [H, T, f], [Hkv, T, f]
    Tensor features;   // W [m, d], empty for LinearElu
};

FeatureMaps featureMaps(Backend& backend, const LayerAttention& layer, const VariantSpec& spec) {
    FeatureMaps maps;
    if (spec.kernel == AttentionKernel::LinearElu) {
        maps.q = backend.allocate(layer.q.shape());
        maps.k = backend.allocate(layer.k.shape());
        backend.map(layer.q, MapOp::Elu1, 1.0f, 0.0f, maps.q);
        backend.map(layer.k, MapOp::Elu1, 1.0f, 0.0f, maps.k);
        return maps;
    }
    const int64_t d = layer.q.dim(2), m = spec.features;
    maps.features = drawFeatures(spec, layer.layer, d);
    if (spec.kernel == AttentionKernel::Favor) {
        const DeviceTensor w = backend.upload(maps.features);
        maps.q = favorFeatures(backend, layer.q, w, layer.scale, true);
        maps.k = favorFeatures(backend, layer.k, w, layer.scale, false);
        return maps;
    }
    Tensor doubled({2 * m, d}), phase({1, 2 * m}, 0.0f);
    const auto& w = maps.features.values();
    std::copy(w.begin(), w.end(), doubled.values().begin());
    std::copy(w.begin(), w.end(), doubled.values().begin() + std::ptrdiff_t(w.size()));
    std::fill(phase.values().begin() + m, phase.values().end(), float(std::numbers::pi / 2));
    const DeviceTensor deviceDoubled = backend.upload(doubled), devicePhase = backend.upload(phase);
    maps.q = rfaFeatures(backend, layer.q, deviceDoubled, devicePhase, m);
    maps.k = rfaFeatures(backend, layer.k, deviceDoubled, devicePhase, m);
    return maps;
}

// φ(k) of padding keys set to 0, so they add nothing to either sum.
void dropPaddingKeys(Backend& backend, const AttentionShape& shape, DeviceTensor& phiK) {
    if (shape.keyValid.empty()) return;
    const int64_t tokens = shape.tokens, f = phiK.dim(2);
    Tensor valid({tokens, f});
    for (int64_t t = 0; t < tokens; ++t)
        std::fill_n(valid.values().begin() + t * f, f, shape.keyMask().valid(t) ? 1.0f : 0.0f);
    backend.binary(phiK, backend.upload(valid), BinaryOp::Mul, phiK);
}

// xᵀ per batch, x [B, M, N] → [B, N, M], as I_N · xᵀ (the op set has no transpose).
DeviceTensor transposed(Backend& backend, const DeviceTensor& x) {
    const int64_t batch = x.dim(0), n = x.dim(2);
    Tensor identity({batch, n, n}, 0.0f);
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < n; ++i)
            identity.values()[std::size_t((b * n + i) * n + i)] = 1.0f;
    DeviceTensor out = backend.allocate({batch, n, x.dim(1)});
    backend.matmul(backend.upload(identity), x, true, 1.0f, out);
    return out;
}

// Encoder form: φ(Q) (φ(K)ᵀ V) / φ(Q) (φ(K)ᵀ 1).
DeviceTensor bidirectional(Backend& backend, const FeatureMaps& maps, const DeviceTensor& v,
                           float eps) {
    const int64_t heads = maps.q.dim(0), tokens = maps.q.dim(1), f = maps.q.dim(2);
    const int64_t kvHeads = v.dim(0), d = v.dim(2);
    const DeviceTensor phiKt = transposed(backend, maps.k); // [Hkv, f, T]
    DeviceTensor memory = backend.allocate({kvHeads, f, d});
    backend.matmul(phiKt, v, false, 1.0f, memory);
    DeviceTensor keySums = backend.allocate({kvHeads, f, 1});
    backend.reduceRows(phiKt, true, keySums);
    DeviceTensor context = backend.allocate({heads, tokens, d});
    backend.matmul(maps.q, memory, false, 1.0f, context);
    DeviceTensor normaliser = backend.allocate({heads, tokens, 1});
    backend.matmul(maps.q, keySums, false, 1.0f, normaliser);
    normaliser = normaliser.reshaped({heads * tokens, 1});
    backend.map(normaliser, MapOp::Affine, 1.0f, eps, normaliser);
    DeviceTensor flat = context.reshaped({heads * tokens, d});
    backend.binary(flat, normaliser, BinaryOp::Div, flat);
    return context;
}

// The implicit attention map diag(Ã1)⁻¹ Ã with Ã = φ(Q)φ(K)ᵀ ⊙ mask, for display only.
DeviceTensor impliedAttention(Backend& backend, const FeatureMaps& maps, const AttentionPlan& plan,
                              float eps) {
    const int64_t heads = maps.q.dim(0), tokens = maps.q.dim(1);
    DeviceTensor map = backend.allocate({heads, tokens, tokens});
    backend.matmul(maps.q, maps.k, true, 1.0f, map);
    if (plan.deviceMask.valid()) backend.binary(map, plan.deviceMask, BinaryOp::Mul, map);
    DeviceTensor sums = backend.allocate({heads * tokens, 1});
    backend.reduceRows(map, true, sums);
    backend.map(sums, MapOp::Affine, 1.0f, eps, sums);
    DeviceTensor flat = map.reshaped({heads * tokens, tokens});
    backend.binary(flat, sums, BinaryOp::Div, flat);
    return map;
}
} // namespace

LinearizedFeatures linearizedFeatures(Backend& backend, const LayerAttention& layer,
                                      const VariantSpec& spec, const AttentionPlan& plan) {
    if (plan.shape.slidingWindow > 0 && plan.shape.tokens > plan.shape.slidingWindow)
        throw VariantError(
            "linearized attention sums over every earlier key, so it cannot keep this model's "
            "sliding window; use a sequence no longer than the window");
    FeatureMaps maps = featureMaps(backend, layer, spec);
    dropPaddingKeys(backend, plan.shape, maps.k);
    return {maps.q, maps.k, maps.features,
            spec.kernel == AttentionKernel::LinearElu ? kEluEps : kFeatureEps};
}

AttentionOutputs linearizedAttention(Backend& backend, const LayerAttention& layer,
                                     const VariantSpec& spec, const AttentionPlan& plan,
                                     const AttentionWants& wants) {
    const LinearizedFeatures features = linearizedFeatures(backend, layer, spec, plan);
    const FeatureMaps maps{features.q, features.k, features.features};
    const float eps = features.eps;
    AttentionOutputs out;
    const int64_t heads = layer.q.dim(0);
    if (plan.shape.causal) {
        out.context = backend.allocate({heads, layer.q.dim(1), layer.v.dim(2)});
        backend.causalLinearAttention(maps.q, perQueryHead(backend, maps.k, heads),
                                      perQueryHead(backend, layer.v, heads), eps, out.context);
    } else {
        out.context = bidirectional(backend, maps, layer.v, eps);
    }
    if (wants.probabilities) out.probabilities = impliedAttention(backend, maps, plan, eps);
    if (wants.internals && !maps.features.empty())
        out.internals["features"] = backend.upload(maps.features);
    return out;
}
} // namespace headlight::variants
