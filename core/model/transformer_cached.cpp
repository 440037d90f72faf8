// Reuse of cached passes (model/kv_cache.h): which plans may reuse what, the passes that start
// at a layer or after a prefix, and the traces they assemble, equal to a full pass's.
#include "backend/key_mask.h"
#include "model/transformer.h"

#include <algorithm>
#include <chrono>
#include <limits>

namespace headlight {
namespace {

// Why a bound: what a kept pass holds (every layer's input, keys and values, its trace) is not in
// the pass's memory plan, so a pass that would keep more is run without the cache.
constexpr int64_t kMaxKeptBytes = int64_t(512) << 20;

template <typename Value>
std::vector<Value> tailOf(const std::vector<Value>& values, int64_t from) {
    if (values.empty()) return {};
    return {values.begin() + from, values.end()};
}

template <typename Value>
std::vector<Value> joinedValues(const std::vector<Value>& head, int64_t keep,
                                const std::vector<Value>& tail) {
    std::vector<Value> joined(head.begin(), head.begin() + keep);
    joined.insert(joined.end(), tail.begin(), tail.end());
    return joined;
}

// [A, keep + n, C] from the first `keep` rows of head [A, R, C] and tail [A, n, C] (rank 2: A = 1).
Tensor rowsJoined(const Tensor& head, int64_t keep, const Tensor& tail) {
    if (tail.empty()) return {};
    const bool batched = tail.rank() == 3;
    const int64_t batches = batched ? tail.dim(0) : 1, n = tail.dim(batched ? 1 : 0);
    const int64_t columns = tail.dim(batched ? 2 : 1), headRows = head.dim(batched ? 1 : 0);
    std::vector<int64_t> shape = tail.shape();
    shape[batched ? 1 : 0] = keep + n;
    // Why appended, not written into a zero-filled tensor: a 1,000-token pass's logits are 16 MB,
    // and filling them first doubled the memory traffic of a token appended to it.
    std::vector<float> values;
    values.reserve(std::size_t(elementCount(shape)));
    for (int64_t b = 0; b < batches; ++b) {
        const float* headRowsOf = head.data() + b * headRows * columns;
        const float* tailRowsOf = tail.data() + b * n * columns;
        values.insert(values.end(), headRowsOf, headRowsOf + keep * columns);
        values.insert(values.end(), tailRowsOf, tailRowsOf + n * columns);
    }
    return Tensor(std::move(shape), std::move(values));
}

// Maps [h, T, T] from a prefix pass's [h, T₀, T₀] (its first `keep` rows, whose keys past `keep`
// a causal mask hides: `fill`) and the new rows [h, n, T].
Tensor mapsJoined(const Tensor& head, int64_t keep, const Tensor& tail, float fill) {
    if (tail.empty()) return {};
    const int64_t heads = tail.dim(0), n = tail.dim(1), total = tail.dim(2), old = head.dim(1);
    Tensor joined({heads, total, total}, fill);
    for (int64_t h = 0; h < heads; ++h) {
        float* out = joined.data() + h * total * total;
        for (int64_t i = 0; i < keep; ++i)
            std::copy_n(head.data() + (h * old + i) * old, keep, out + i * total);
        std::copy_n(tail.data() + h * n * total, n * total, out + keep * total);
    }
    return joined;
}

// The trace of a prefix reuse: `fresh` computed positions keep.. of the request. Its per-position
// rows go to `rows` (the kept pass's first `keep`, then fresh's), not into the trace.
Trace prefixTrace(const CachedPass& from, int64_t keep, Trace fresh, KeptRows& rows) {
    const Trace& kept = from.trace;
    Trace trace;
    trace.ids = joinedValues(kept.ids, keep, fresh.ids);
    trace.valid = joinedValues(kept.valid, keep, fresh.valid);
    trace.layers.resize(fresh.layers.size());
    for (std::size_t l = 0; l < fresh.layers.size(); ++l) {
        const LayerTrace &a = kept.layers[l], &b = fresh.layers[l];
        LayerTrace& out = trace.layers[l];
        out.heads = b.heads;
        out.probabilities = mapsJoined(a.probabilities, keep, b.probabilities, 0.0f);
        out.scores = mapsJoined(a.scores, keep, b.scores, std::numeric_limits<float>::lowest());
        out.headOutputs = rowsJoined(a.headOutputs, keep, b.headOutputs);
        out.queries = rowsJoined(a.queries, keep, b.queries);
        out.keys = rowsJoined(a.keys, keep, b.keys);
        out.attentionRule = b.attentionRule;
        out.internals = b.internals;
        out.attentionOutput = rowsJoined(a.attentionOutput, keep, b.attentionOutput);
        out.residualMid = rowsJoined(a.residualMid, keep, b.residualMid);
        out.mlpInput = rowsJoined(a.mlpInput, keep, b.mlpInput);
        out.mlpOutput = rowsJoined(a.mlpOutput, keep, b.mlpOutput);
    }
    trace.residualBeforeFinalNorm =
        rowsJoined(kept.residualBeforeFinalNorm, keep, fresh.residualBeforeFinalNorm);
    trace.layersRun = fresh.layersRun;
    const KeptRows tail = takeRows(fresh);
    for (std::size_t i = 0; i < tail.hiddenStates.size(); ++i)
        rows.hiddenStates.push_back(
            from.rows.hiddenStates[i].leading(keep).followedBy(tail.hiddenStates[i]));
    rows.lastHiddenState = from.rows.lastHiddenState.leading(keep).followedBy(tail.lastHiddenState);
    rows.logits = from.rows.logits.leading(keep).followedBy(tail.logits);
    trace.internals = std::move(fresh.internals);
    return trace;
}

// Per layer its input [T, D], keys and values [T, kvHeads·d] (causal plans); the captured maps,
// logits and hidden states.
int64_t bytesKept(const ModelSpec& spec, const CaptureRequest& capture, int64_t tokens,
                  bool keysValues) {
    const int64_t layers = capture.layers.empty() ? spec.layers : int64_t(capture.layers.size());
    const int64_t maps = (capture.probabilities ? 1 : 0) + (capture.scores ? 1 : 0);
    const int64_t heads = capture.heads.empty() ? spec.heads : int64_t(capture.heads.size());
    const int64_t perLayer =
        tokens * (spec.hidden + (keysValues ? 2 * spec.kvHeads * spec.headDim : 0));
    const int64_t rows = (capture.logits ? spec.vocabSize : 0) +
                         (capture.hiddenStates ? (spec.layers + 1) * int64_t(spec.hidden) : 0);
    return 4 * (spec.layers * perLayer + layers * maps * heads * tokens * tokens + tokens * rows);
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}
} // namespace

std::string TransformerModel::layerReuseBlocker(const variants::ForwardPlan& plan) const {
    if (plan.depth != variants::DepthLoop::Stack)
        return "the variant's depth loop carries state from layer to layer";
    if (plan.attention != variants::AttentionRoute::Fused)
        return "the variant's attention (composed route) may carry state from layer to layer";
    if (plan.earlyExit) return "early exit follows each token across the layers";
    return {};
}

std::string TransformerModel::prefixReuseBlocker(const variants::ForwardPlan& plan,
                                                 const ModelInput& input,
                                                 const variants::VariantSpec& variant) const {
    if (!spec_.causal) return "the model attends both ways, so a position depends on later ones";
    const auto& mask = input.attentionMask;
    if (std::find(mask.begin(), mask.end(), 0) != mask.end())
        return "a padded row attends every key, later ones included";
    if (variant.position == variants::PositionKind::Sinusoidal)
        return "sinusoidal positions are added for the whole text at once";
    for (const Layer& layer : layers_)
        if (!layer.experts.empty())
            return "mixture-of-experts routing is decided over the whole text";
    for (const variants::HeadAblation& head : plan.intervention.heads)
        if (head.spec.mode != variants::AblationMode::Zero)
            return "a mean or replaced head output reads every position";
    if (!plan.intervention.residuals.empty())
        return "a residual patch is written at a position of the whole text";
    return {};
}

Trace TransformerModel::forwardCached(KvCache& cache, const ModelInput& input,
                                      const CaptureRequest& capture,
                                      const variants::VariantSpec& requested,
                                      const variants::Intervention& intervention,
                                      const PassControl& control) const {
    const auto started = std::chrono::steady_clock::now();
    variants::VariantSpec variant;
    const variants::ForwardPlan plan =
        preparePass(input, capture, requested, intervention, variant);
    const std::string prefixBlocker = prefixReuseBlocker(plan, input, variant);
    const int64_t keptBytes =
        bytesKept(spec_, capture, int64_t(input.ids.size()), prefixBlocker.empty());
    std::string blocker = layerReuseBlocker(plan);
    if (blocker.empty() && keptBytes > kMaxKeptBytes)
        blocker = "the pass would keep " + std::to_string(keptBytes >> 20) + " MiB";
    if (!blocker.empty()) {
        cache.note("not cached: " + blocker);
        return runPass(input, capture, variant, plan, control, nullptr);
    }
    const CacheRequest request{input.ids,    input.tokenTypes,     input.attentionMask,
                               requested,    intervention,         capture,
                               spec_.layers, prefixBlocker.empty()};
    const CacheReuse reuse = cache.find(request);
    if (reuse.kind == CacheReuse::Kind::Same) {
        cache.note("the same request: its kept trace");
        Trace trace = reuse.from->fullTrace();
        trace.forwardMs = millisecondsSince(started);
        return trace;
    }
    auto kept = std::make_shared<CachedPass>();
    *kept = {input.ids,
             input.tokenTypes,
             input.attentionMask,
             requested,
             intervention,
             capture,
             {},
             {},
             {},
             {}};
    kept->layerInputs.resize(std::size_t(spec_.layers));
    if (prefixBlocker.empty()) {
        kept->keys.resize(std::size_t(spec_.layers));
        kept->values.resize(std::size_t(spec_.layers));
    }
    Trace trace;
    if (reuse.kind == CacheReuse::Kind::Layers) {
        cache.note("layers 0.." + std::to_string(reuse.layer - 1) + " kept");
        trace = runFromLayer(reuse, input, capture, variant, plan, control, *kept);
        kept->rows = takeRows(trace);
    } else if (reuse.kind == CacheReuse::Kind::Prefix) {
        cache.note("positions 0.." + std::to_string(reuse.prefix - 1) + " kept");
        trace = runAfterPrefix(reuse, input, capture, variant, plan, control, *kept);
    } else {
        cache.note(prefixBlocker.empty() ? "full pass"
                                         : "full pass; no prefix reuse: " + prefixBlocker);
        PassStart start;
        start.kept = kept.get();
        trace = runPass(input, capture, variant, plan, control, &start);
        kept->rows = takeRows(trace);
    }
    // Why the rows apart: the kept pass shares them (a prefix reuse shares its source's), and the
    // trace returned gets them joined, one copy.
    kept->trace = trace;
    putRows(kept->rows, trace);
    cache.keep(std::move(kept));
    trace.forwardMs = millisecondsSince(started);
    return trace;
}

Trace TransformerModel::runFromLayer(const CacheReuse& reuse, const ModelInput& input,
                                     const CaptureRequest& capture,
                                     const variants::VariantSpec& variant,
                                     const variants::ForwardPlan& plan, const PassControl& control,
                                     CachedPass& kept) const {
    const CachedPass& from = *reuse.from;
    const std::size_t first = std::size_t(reuse.layer);
    // Why: a pass kept without keys (a mean ablation in a later layer) has none for the layers
    // reused, so this one keeps none either.
    if (!from.causalPrefix()) {
        kept.keys.clear();
        kept.values.clear();
    }
    for (std::size_t l = 0; l < first; ++l) {
        kept.layerInputs[l] = from.layerInputs[l];
        if (!kept.keys.empty()) {
            kept.keys[l] = from.keys[l];
            kept.values[l] = from.values[l];
        }
    }
    PassStart start;
    start.x = joinedRows(backend_, from.layerInputs[first]);
    start.kept = &kept;
    start.firstLayer = reuse.layer;
    Trace trace = runPass(input, capture, variant, plan, control, &start);
    for (std::size_t l = 0; l < first; ++l)
        trace.layers[l] = from.trace.layers[l];
    if (capture.hiddenStates)
        for (int l = reuse.layer - 1; l >= 0; --l)
            trace.hiddenStates.insert(trace.hiddenStates.begin(),
                                      from.rows.hiddenStates[std::size_t(l)].joined());
    return trace;
}

// The trace of positions 0..T−1 without its per-position rows, which go to kept.rows.
Trace TransformerModel::runAfterPrefix(const CacheReuse& reuse, const ModelInput& input,
                                       const CaptureRequest& capture,
                                       const variants::VariantSpec& variant,
                                       const variants::ForwardPlan& plan,
                                       const PassControl& control, CachedPass& kept) const {
    const CachedPass& from = *reuse.from;
    const int64_t keep = reuse.prefix;
    const ModelInput fresh{tailOf(input.ids, keep), tailOf(input.tokenTypes, keep),
                           tailOf(input.attentionMask, keep)};
    for (std::size_t l = 0; l < kept.layerInputs.size(); ++l)
        kept.layerInputs[l] = leadingRows(backend_, from.layerInputs[l], keep);
    PassStart start;
    start.positions = tailOf(positionIds(input), keep);
    start.kept = &kept;
    start.prefixFrom = &from;
    start.prefix = keep;
    return prefixTrace(from, keep, runPass(fresh, capture, variant, plan, control, &start),
                       kept.rows);
}

void TransformerModel::keepKeysValues(int index, const DeviceTensor& k, const DeviceTensor& v,
                                      Pass& pass) const {
    if (pass.kept->keys.empty()) return;
    const int64_t tokens = k.dim(0), kvHeads = spec_.kvHeads, d = spec_.headDim;
    DeviceTensor keys = backend_.allocate({kvHeads, tokens, d});
    DeviceTensor values = backend_.allocate({kvHeads, tokens, d});
    backend_.splitHeads(k, int(kvHeads), keys);
    backend_.splitHeads(v, int(kvHeads), values);
    pass.kept->keys[std::size_t(index)] = keys;
    pass.kept->values[std::size_t(index)] = values;
}

// softmax(scale·q kᵀ, soft-capped, masked) v for the new positions, as Backend::attention
// computes it for every position: the same mask rule (KeyMask) on absolute positions.
DeviceTensor TransformerModel::attendAfterPrefix(int index, const DeviceTensor& q,
                                                 const DeviceTensor& k, const DeviceTensor& v,
                                                 bool windowed, Pass& pass,
                                                 PendingCapture& capture) const {
    const CachedPass& from = *pass.prefixFrom;
    const int64_t n = q.dim(0), keep = pass.prefix, total = keep + n, d = spec_.headDim;
    const int64_t heads = spec_.heads, kvHeads = spec_.kvHeads;
    // [kvHeads, total, d]: the kept rows of each head, then the new ones.
    const auto extended = [&](const DeviceTensor& cached, const DeviceTensor& fresh) {
        DeviceTensor split = backend_.allocate({kvHeads, n, d});
        backend_.splitHeads(fresh, int(kvHeads), split);
        const int64_t old = cached.dim(1);
        const DeviceTensor cachedRows = cached.reshaped({kvHeads * old, d});
        const DeviceTensor splitRows = split.reshaped({kvHeads * n, d});
        DeviceTensor all = backend_.allocate({kvHeads * total, d});
        for (int64_t h = 0; h < kvHeads; ++h) {
            backend_.copyRows(cachedRows, h * old, keep, all, h * total);
            backend_.copyRows(splitRows, h * n, n, all, h * total + keep);
        }
        return all.reshaped({kvHeads, total, d});
    };
    const DeviceTensor keys = extended(from.keys[std::size_t(index)], k);
    const DeviceTensor values = extended(from.values[std::size_t(index)], v);
    pass.kept->keys[std::size_t(index)] = keys;
    pass.kept->values[std::size_t(index)] = values;
    DeviceTensor queries = backend_.allocate({heads, n, d});
    backend_.splitHeads(q, int(heads), queries);
    DeviceTensor scores = backend_.allocate({heads, n, total});
    backend_.matmul(queries, keys, true, attentionScale(), scores);
    if (const float cap = spec_.attentionSoftcap; cap > 0) {
        backend_.map(scores, MapOp::Tanh, 1.0f / cap, 0.0f, scores);
        backend_.map(scores, MapOp::Affine, cap, 0.0f, scores);
    }
    const KeyMask rule{spec_.causal, windowed ? spec_.slidingWindow.value_or(0) : 0, {}};
    Tensor allowed({n, total}), penalty({n, total});
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < total; ++j) {
            const bool allows = rule.allows(keep + i, j);
            allowed.data()[i * total + j] = allows ? 1.0f : 0.0f;
            penalty.data()[i * total + j] = allows ? 0.0f : std::numeric_limits<float>::lowest();
        }
    const DeviceTensor mask = backend_.upload(allowed);
    DeviceTensor probabilities = backend_.allocate({heads, n, total});
    backend_.softmax(scores, &mask, probabilities);
    if (capture.wantScores) {
        backend_.binary(scores, mask, BinaryOp::Mul, scores);
        backend_.binary(scores, backend_.upload(penalty), BinaryOp::Add, scores);
        capture.scores = scores;
    }
    if (capture.wantProbabilities) capture.probabilities = probabilities;
    DeviceTensor context = backend_.allocate({heads, n, d});
    backend_.matmul(probabilities, values, false, 1.0f, context);
    DeviceTensor merged = backend_.allocate({n, heads * d});
    backend_.mergeHeads(context, merged);
    return merged;
}
} // namespace headlight
