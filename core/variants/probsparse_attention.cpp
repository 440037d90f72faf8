// ProbSparse self-attention (docs/variants.md, option 5; Informer, Zhou et al. 2021): only the u queries whose
// attention is furthest from uniform are computed exactly; the others ("lazy") take the uniform
// distribution over their keys, i.e. the mean of V (the cumulative mean in a causal model).
//   M̄(q_i, K) = max_j s_ij − mean_j s_ij over sampled keys j, s_ij = scale·q_i·k_j,
//   u = min(T, ⌈c·⌈ln T⌉⌉) active queries per head (top-u M̄, ties to the earlier position),
//   U = min(T, ⌈c·⌈ln T⌉⌉) sampled keys, c = probSparseFactor.
// Sampling: when U < T, U key positions drawn with replacement by below(T) from
// SeededRandom(streamSeed(spec.seed, kProbSparsePurpose, layer)), in order; when U = T every key
// in order and nothing is drawn. One sample serves every query and head (Informer draws one per
// query; one shared sample keeps the measure a single matmul on every backend).
// Masking: the measure uses only the sampled keys a query may see (padding, causality); an active
// query attends all its allowed keys; lazy rows average only the valid keys (≤ i when causal).
// As in Informer, which queries are active is decided over the whole sequence.
//
// Outputs: probabilities = active rows exact, lazy rows uniform over allowed keys; no scores.
// Internals: "active_queries" [H, T] (1 active, 0 lazy), "sparsity_measure" [H, T] (M̄).
#include "variants/composed_attention.h"
#include "variants/kernel_rows.h"
#include "variants/seeded_random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace headlight::variants {
namespace {

constexpr uint32_t kProbSparsePurpose = 0x103;
// Only keeps 0/0 out of a lazy row without valid keys; counts are whole numbers otherwise.
constexpr float kCountEps = 1e-30f;

int64_t informerCount(float factor, int64_t tokens) {
    const double logT = std::ceil(std::log(double(tokens)));
    return std::clamp<int64_t>(int64_t(std::ceil(double(factor) * logT)), 1, tokens);
}

std::vector<int32_t> sampledKeys(const VariantSpec& spec, int layer, int64_t tokens) {
    const int64_t count = informerCount(spec.probSparseFactor, tokens);
    std::vector<int32_t> keys(std::size_t(count), 0);
    if (count == tokens) {
        std::iota(keys.begin(), keys.end(), 0);
        return keys;
    }
    SeededRandom random(streamSeed(spec.seed, kProbSparsePurpose, uint32_t(layer)));
    for (int32_t& key : keys)
        key = int32_t(random.below(uint64_t(tokens)));
    return keys;
}

// M̄ [H·T, 1] from the scores against the sampled keys, masked per query.
DeviceTensor sparsityMeasure(Backend& backend, const LayerAttention& layer,
                             const AttentionShape& shape, const std::vector<int32_t>& sample) {
    const int64_t heads = layer.q.dim(0), kvHeads = layer.k.dim(0), tokens = shape.tokens,
                  d = layer.q.dim(2);
    const int64_t count = int64_t(sample.size());
    std::vector<int32_t> ids;
    for (int64_t g = 0; g < kvHeads; ++g)
        for (int32_t key : sample)
            ids.push_back(int32_t(g * tokens + key));
    const DeviceTensor keys =
        gathered(backend, layer.k.reshaped({kvHeads * tokens, d}), ids, {kvHeads, count, d});
    DeviceTensor scores = backend.allocate({heads, tokens, count});
    backend.matmul(layer.q, keys, true, layer.scale, scores);

    const float lowest = std::numeric_limits<float>::lowest();
    Tensor mask({tokens, count}), fill({tokens, count}), seen({heads * tokens, 1});
    const KeyMask rule = shape.keyMask();
    for (int64_t i = 0; i < tokens; ++i) {
        float visible = 0.0f;
        for (int64_t s = 0; s < count; ++s) {
            const bool ok = rule.allows(i, sample[std::size_t(s)]);
            mask.values()[std::size_t(i * count + s)] = ok ? 1.0f : 0.0f;
            fill.values()[std::size_t(i * count + s)] = ok ? 0.0f : lowest;
            visible += ok ? 1.0f : 0.0f;
        }
        for (int64_t h = 0; h < heads; ++h)
            seen.values()[std::size_t(h * tokens + i)] = std::max(visible, 1.0f);
    }
    backend.binary(scores, backend.upload(mask), BinaryOp::Mul, scores);
    DeviceTensor means = backend.allocate({heads * tokens, 1});
    backend.reduceRows(scores, true, means);
    backend.binary(means, backend.upload(seen), BinaryOp::Div, means);
    backend.binary(scores, backend.upload(fill), BinaryOp::Add, scores);
    DeviceTensor measure = backend.allocate({heads * tokens, 1});
    backend.reduceRows(scores, false, measure);
    backend.binary(measure, means, BinaryOp::Sub, measure);
    return measure;
}

// Row ids (h·T + i) of the top-u queries of every head, by M̄.
std::vector<int32_t> activeRows(const Tensor& measure, int64_t heads, int64_t tokens, int64_t u) {
    std::vector<int32_t> rows;
    std::vector<int32_t> order(static_cast<std::size_t>(tokens));
    for (int64_t h = 0; h < heads; ++h) {
        const float* m = measure.data() + h * tokens;
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [m](int32_t a, int32_t b) { return m[a] > m[b]; });
        for (int64_t i = 0; i < u; ++i)
            rows.push_back(int32_t(h * tokens + order[std::size_t(i)]));
    }
    return rows;
}

// Every query's lazy output [H, T, d]: the mean of the valid values, cumulative when causal
// (prefix sums of Backend::causalLinearAttention with φ(q) = 1 and φ(k) = key validity).
DeviceTensor lazyContext(Backend& backend, const LayerAttention& layer,
                         const AttentionShape& shape) {
    const int64_t heads = layer.q.dim(0), kvHeads = layer.v.dim(0), tokens = shape.tokens,
                  d = layer.v.dim(2);
    Tensor validity({kvHeads, tokens, 1});
    const KeyMask rule = shape.keyMask();
    float valid = 0.0f;
    for (int64_t t = 0; t < tokens; ++t)
        valid += rule.valid(t) ? 1.0f : 0.0f;
    for (int64_t g = 0; g < kvHeads; ++g)
        for (int64_t t = 0; t < tokens; ++t)
            validity.values()[std::size_t(g * tokens + t)] = rule.valid(t) ? 1.0f : 0.0f;
    if (shape.causal) {
        DeviceTensor lazy = backend.allocate({kvHeads, tokens, d});
        backend.causalLinearAttention(backend.upload(Tensor({kvHeads, tokens, 1}, 1.0f)),
                                      backend.upload(validity), layer.v, kCountEps, lazy);
        return perQueryHead(backend, lazy, heads);
    }
    for (float& w : validity.values())
        w /= std::max(valid, 1.0f);
    DeviceTensor mean = backend.allocate({kvHeads, 1, d});
    validity.reshape({kvHeads, 1, tokens});
    backend.matmul(backend.upload(validity), layer.v, false, 1.0f, mean);
    DeviceTensor context = backend.allocate({heads, tokens, d});
    backend.matmul(backend.upload(Tensor({heads, tokens, 1}, 1.0f)), mean, false, 1.0f, context);
    return context;
}

// rows of `target` [R, N] at `ids` replaced by `replacement` [ids, N] (scatterAddRows only adds).
void replaceRows(Backend& backend, const DeviceTensor& replacement, const std::vector<int32_t>& ids,
                 DeviceTensor& target) {
    const int64_t n = target.shape().back();
    const DeviceTensor flatReplacement = replacement.reshaped({int64_t(ids.size()), n});
    DeviceTensor flat = target.reshaped({target.size() / n, n});
    DeviceTensor difference = backend.allocate({int64_t(ids.size()), n});
    backend.gatherRows(flat, ids, difference);
    backend.binary(flatReplacement, difference, BinaryOp::Sub, difference);
    const std::vector<float> ones(ids.size(), 1.0f);
    backend.scatterAddRows(difference, ids, ones, flat);
}

// The effective map: uniform over allowed keys (lazy rows), then the active rows' softmax.
DeviceTensor effectiveAttention(Backend& backend, const AttentionPlan& plan,
                                const DeviceTensor& active, const std::vector<int32_t>& ids,
                                int64_t heads) {
    const int64_t tokens = plan.shape.tokens;
    DeviceTensor map = backend.upload(Tensor({heads, tokens, tokens}, 0.0f));
    backend.softmax(map, plan.deviceMask.valid() ? &plan.deviceMask : nullptr, map);
    replaceRows(backend, active, ids, map);
    return map;
}

// Mask rows [H, u, T] of the active queries (plan.deviceMask has one or H heads).
DeviceTensor activeMask(Backend& backend, const AttentionPlan& plan,
                        const std::vector<int32_t>& ids, int64_t heads) {
    const int64_t tokens = plan.shape.tokens, maskHeads = plan.deviceMask.dim(0),
                  u = int64_t(ids.size()) / heads;
    std::vector<int32_t> rows(ids);
    if (maskHeads == 1)
        for (int32_t& row : rows)
            row %= int32_t(tokens);
    return gathered(backend, plan.deviceMask.reshaped({maskHeads * tokens, tokens}), rows,
                    {heads, u, tokens});
}
} // namespace

AttentionOutputs probSparseAttention(Backend& backend, const LayerAttention& layer,
                                     const VariantSpec& spec, const AttentionPlan& plan,
                                     const AttentionWants& wants) {
    if (plan.shape.slidingWindow > 0 && plan.shape.tokens > plan.shape.slidingWindow)
        throw VariantError(
            "ProbSparse lazy queries average every earlier value, so they cannot keep this model's "
            "sliding window; use a sequence no longer than the window");
    const int64_t heads = layer.q.dim(0), tokens = plan.shape.tokens, d = layer.q.dim(2);
    const int64_t u = informerCount(spec.probSparseFactor, tokens);
    const DeviceTensor measure =
        sparsityMeasure(backend, layer, plan.shape, sampledKeys(spec, layer.layer, tokens));
    const std::vector<int32_t> ids = activeRows(backend.download(measure), heads, tokens, u);

    const DeviceTensor queries =
        gathered(backend, layer.q.reshaped({heads * tokens, d}), ids, {heads, u, d});
    DeviceTensor weights = backend.allocate({heads, u, tokens});
    backend.matmul(queries, layer.k, true, layer.scale, weights);
    const DeviceTensor mask =
        plan.deviceMask.valid() ? activeMask(backend, plan, ids, heads) : DeviceTensor();
    backend.softmax(weights, mask.valid() ? &mask : nullptr, weights);
    DeviceTensor exact = backend.allocate({heads, u, layer.v.dim(2)});
    backend.matmul(weights, layer.v, false, 1.0f, exact);

    AttentionOutputs out;
    out.context = lazyContext(backend, layer, plan.shape);
    replaceRows(backend, exact, ids, out.context);
    if (wants.probabilities)
        out.probabilities = effectiveAttention(backend, plan, weights, ids, heads);
    if (wants.internals) {
        Tensor activeFlags({heads, tokens}, 0.0f);
        for (int32_t row : ids)
            activeFlags.values()[std::size_t(row)] = 1.0f;
        out.internals["active_queries"] = backend.upload(activeFlags);
        out.internals["sparsity_measure"] = measure.reshaped({heads, tokens});
    }
    return out;
}
} // namespace headlight::variants
