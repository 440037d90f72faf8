#include "analysis/atlas_variant.h"

#include "backend/cpu/cpu_gemm.h"
#include "backend/key_mask.h"
#include "variants/atlas_attention.h"
#include "variants/attention_plan.h"
#include "variants/composed_attention.h"
#include "variants/variant_merge.h"

#include <cmath>
#include <limits>

namespace headlight::analysis {
namespace {

variants::AttentionShape shapeOf(const AtlasInput& input, const ModelSpec& spec) {
    variants::AttentionShape shape;
    shape.heads = input.heads;
    shape.kvHeads = input.kvHeads;
    shape.headDim = int(input.queries.dim(1) / input.heads);
    shape.tokens = input.queries.dim(0);
    shape.causal = spec.causal;
    shape.slidingWindow = spec.slidingWindow.value_or(0);
    shape.keyValid = input.keyValid;
    return shape;
}

// x [T, heads·d] on `backend` as [heads, T, d], the layout the variants' kernels read.
DeviceTensor perHead(Backend& backend, const Tensor& x, int heads) {
    DeviceTensor out = backend.allocate({heads, x.dim(0), x.dim(1) / heads});
    backend.splitHeads(backend.upload(x), heads, out);
    return out;
}

std::string nameOf(const variants::VariantSpec& v) {
    switch (v.kernel) {
    case variants::AttentionKernel::Lsh:
        return "Reformer LSH";
    case variants::AttentionKernel::Favor:
        return "FAVOR+";
    case variants::AttentionKernel::Rfa:
        return "random Fourier features";
    case variants::AttentionKernel::LinearElu:
        return "linear (elu + 1)";
    default:
        break;
    }
    return v.mask->preset.empty() ? "sparse mask" : v.mask->preset + " mask";
}

// The kernel's own rule for this layer, computed by the kernel's own code on the CPU.
AtlasVariant describe(const AtlasInput& input, const ModelSpec& spec,
                      const variants::VariantSpec& variant, int layerIndex) {
    AtlasVariant v;
    v.name = nameOf(variant);
    // As TransformerModel::attendComposed scales q·k.
    v.scale = spec.scaleAttnWeights ? 1.0f / std::sqrt(float(spec.headDim)) : 1.0f;
    v.causal = spec.causal;
    v.slidingWindow = spec.slidingWindow.value_or(0);
    v.nominalMask = variant.mask;
    const auto backend = makeCpuBackend();
    const variants::AttentionShape shape = shapeOf(input, spec);
    if (variant.kernel == variants::AttentionKernel::Softmax) {
        v.pattern = *variants::planAttention(*backend, shape, variant).pattern;
        v.uniformEmptyRows = true;
        return v;
    }
    // Why no planAttention: LSH and the linearized kernels read only its shape, and it would
    // build a dense causal mask.
    variants::AttentionPlan plan;
    plan.shape = shape;
    variants::LayerAttention layer;
    layer.layer = layerIndex;
    layer.scale = v.scale;
    layer.q = perHead(*backend, input.queries, input.heads);
    layer.k = perHead(*backend, input.keys, input.kvHeads);
    if (variant.kernel == variants::AttentionKernel::Lsh) {
        variants::LshPairs pairs = variants::lshPairs(*backend, layer, variant, plan);
        v.pattern = std::move(pairs.pattern);
        v.sharedKeys = std::move(pairs.sharedKeys);
        return v;
    }
    const variants::LinearizedFeatures features =
        variants::linearizedFeatures(*backend, layer, variant, plan);
    v.queryFeatures = backend->download(features.q);
    v.keyFeatures = backend->download(features.k);
    v.eps = features.eps;
    return v;
}

// Softmax over each query's listed keys (a key listed n times counts n times).
RowMatrix patternRows(const AtlasInput& input, int head, int64_t q0, int64_t q1, int64_t k0,
                      int64_t k1, const float* read, float* record) {
    const AtlasVariant& v = *input.variant;
    const SparsePattern& pattern = *v.pattern;
    const int64_t tokens = input.queries.dim(0), d = input.queries.dim(1) / input.heads;
    const int64_t kvHead = head / (input.heads / input.kvHeads);
    const ConstMatrixMap queries = input.queries.matrix();
    const ConstMatrixMap keys = v.sharedKeys.empty() ? input.keys.matrix() : v.sharedKeys.matrix();
    const int64_t keyRow0 = v.sharedKeys.empty() ? 0 : head * tokens;
    const int64_t keyCol0 = v.sharedKeys.empty() ? kvHead * d : 0;
    RowMatrix out = RowMatrix::Zero(q1 - q0, k1 - k0);
    std::vector<float> scores;
    for (int64_t i = q0; i < q1; ++i) {
        const std::size_t row = std::size_t((head % pattern.heads) * tokens + i);
        const int32_t first = pattern.rowStart[row], end = pattern.rowStart[row + 1];
        const auto query = queries.row(i).segment(head * d, d);
        scores.resize(std::size_t(end - first));
        for (int32_t e = first; e < end; ++e)
            scores[std::size_t(e - first)] =
                v.scale *
                query.dot(keys.row(keyRow0 + pattern.keys[std::size_t(e)]).segment(keyCol0, d));
        if (record) {
            float top = -std::numeric_limits<float>::infinity();
            for (const float s : scores)
                top = std::max(top, s);
            double total = 0.0;
            for (const float s : scores)
                total += std::exp(double(s - top));
            record[i] = first == end ? top : top + float(std::log(total));
        }
        const float lse = record ? record[i] : read[i];
        if (first == end) {
            if (v.uniformEmptyRows) out.row(i - q0).setConstant(1.0f / float(tokens));
            continue;
        }
        for (int32_t e = first; e < end; ++e)
            if (const int32_t j = pattern.keys[std::size_t(e)]; j >= k0 && j < k1)
                out(i - q0, j - k0) += std::exp(scores[std::size_t(e - first)] - lse);
    }
    return out;
}

// φ(q_i)·φ(k_j) over the allowed keys, divided by each query's Σ + ε.
RowMatrix featureRows(const AtlasInput& input, int head, int64_t q0, int64_t q1, int64_t k0,
                      int64_t k1, const float* read, float* record) {
    const AtlasVariant& v = *input.variant;
    const int64_t tokens = input.queries.dim(0), f = v.queryFeatures.dim(2);
    const int64_t kvHead = head / (input.heads / input.kvHeads);
    RowMatrix out(q1 - q0, k1 - k0);
    cpu::gemm(v.queryFeatures.data() + (head * tokens + q0) * f,
              v.keyFeatures.data() + (kvHead * tokens + k0) * f, out.data(), q1 - q0, f, k1 - k0,
              true, 1.0f);
    const KeyMask mask{v.causal, v.slidingWindow, input.keyValid};
    for (int64_t i = q0; i < q1; ++i) {
        for (int64_t j = k0; j < k1; ++j)
            if (!mask.allows(i, j)) out(i - q0, j - k0) = 0.0f;
        if (record) record[i] = out.row(i - q0).sum() + v.eps;
        out.row(i - q0) /= record ? record[i] : read[i];
    }
    return out;
}
// The variant the model runs for `requested`: merged over a zoo checkpoint's own settings.
variants::VariantSpec effectiveVariant(const ModelSpec& spec,
                                       const variants::VariantSpec& requested) {
    return spec.architecture == Architecture::Headlight
               ? variants::requestOverCheckpoint(spec.zoo, requested)
               : requested;
}
} // namespace

bool atlasDrawsVariant(const ModelSpec& spec, const variants::VariantSpec& requested) {
    const variants::VariantSpec variant = effectiveVariant(spec, requested);
    if (!variant.needsComposedPath()) return false;
    if (const std::string refusal = variants::atlasRefusal(variant); !refusal.empty())
        throw variants::VariantError(refusal);
    return true;
}

AtlasInput atlasInputOf(const LayerTrace& layer, const ModelSpec& spec,
                        std::vector<uint8_t> keyValid, const variants::VariantSpec& requested,
                        int layerIndex) {
    AtlasInput input = atlasInputOf(layer, spec, std::move(keyValid));
    if (!atlasDrawsVariant(spec, requested)) return input;
    const variants::VariantSpec variant = effectiveVariant(spec, requested);
    input.variant =
        std::make_shared<const AtlasVariant>(describe(input, spec, variant, layerIndex));
    return input;
}

RowMatrix variantHeadRows(const AtlasInput& input, int head, int64_t q0, int64_t q1, int64_t k0,
                          int64_t k1, const std::vector<float>& normalisers) {
    return input.variant->pattern
               ? patternRows(input, head, q0, q1, k0, k1, normalisers.data(), nullptr)
               : featureRows(input, head, q0, q1, k0, k1, normalisers.data(), nullptr);
}

RowMatrix variantHeadRowsRecording(const AtlasInput& input, int head, int64_t q0, int64_t q1,
                                   int64_t k0, int64_t k1, std::vector<float>& normalisers) {
    return input.variant->pattern
               ? patternRows(input, head, q0, q1, k0, k1, nullptr, normalisers.data())
               : featureRows(input, head, q0, q1, k0, k1, nullptr, normalisers.data());
}
} // namespace headlight::analysis
