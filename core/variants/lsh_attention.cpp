// Reformer LSH attention (docs/variants.md, option 3; Kitaev et al. 2020): tokens are hashed
// by angular LSH,
//   h(x) = argmax [xR; −xR],  R ∈ ℝ^{d × b/2} random, b = lshBuckets buckets
// (ties go to the first entry of the concatenation), sorted by (bucket, position), cut into chunks
// of c = min(lshChunk, T) sorted tokens, and each chunk's queries attend the keys of their own
// chunk and the one before it (one chunk when c ≥ T) — only keys in their own bucket, allowed by
// causality and padding (and a sliding window), with a softmax over those: O(T·c·d) per round.
//   sharedQk (Reformer): keys are the normalised queries k_j = q_j / ‖q_j‖ (same buckets); a token
//     does not attend to itself unless no other key is allowed.
//   otherwise: the checkpoint's keys, hashed with the same R; query i attends key j when
//     h(k_j) = h(q_i). Keys follow the query sort order, so a query's own key is always in its
//     window; a query with no allowed key attends its own key alone.
// Rounds (lshRounds > 1): each round hashes with its own R; the outputs are combined with weights
// exp(lse_r − log Σ_r exp lse_r), lse_r the log-normaliser of the round (Reformer §2.3, keys seen
// in several rounds are not deduplicated), less 1e5 where the query fell back on its own key in
// that round (trax's self-mask value: its own key only when no round offers another).
// Where this differs from the authors' code (trax: no bucket mask in the window, a cyclic
// look-back, unit keys without the 1/√d): docs/variants.md, tools/zoo/zoo_kernels.py.
//
// Random numbers: SeededRandom(streamSeed(spec.seed, kLshPurpose, layer)); for each round r in
// order, R_r as d × b/2 normals row-major (one R per round, shared by every head).
// Host-side: bucket ids (projections downloaded), the sort, the window ids and masks; the device
// gathers, multiplies, softmaxes and scatters back.
//
// Outputs: probabilities = the sparse softmax weights scattered to [H, T, T] (and combined over
// rounds); scores = the scaled logits of the attended pairs, the lowest f32 elsewhere. Internals:
// "lsh_buckets" [H, T] (query bucket as float), "lsh_order" [H, T] (sorted positions), and for
// sharedQk = false "lsh_key_buckets" [H, T]; rounds r ≥ 1 add the same names suffixed ".r".
#include "variants/composed_attention.h"
#include "variants/kernel_rows.h"
#include "variants/seeded_random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace headlight::variants {
namespace {

constexpr uint32_t kLshPurpose = 0x100;
// Subtracted from a round's log-normaliser where the query fell back on its own key (trax's
// self-mask value): such a round weighs exp(−1e5) ≈ 0 beside a round with real keys.
constexpr double kFallbackPenalty = 1e5;

// The sorted, chunked layout shared by every head of a round.
struct Geometry {
    int64_t heads, tokens, chunk, chunks, width;
    int64_t slots() const {
        return chunks * chunk;
    } // sorted positions incl. the padding of the last chunk
};

Geometry geometryOf(const LayerAttention& layer, const VariantSpec& spec) {
    Geometry g{};
    g.heads = layer.q.dim(0);
    g.tokens = layer.q.dim(1);
    g.chunk = std::min<int64_t>(spec.lshChunk, g.tokens);
    g.chunks = (g.tokens + g.chunk - 1) / g.chunk;
    g.width = g.chunks > 1 ? 2 * g.chunk : g.chunk;
    return g;
}

// [d, rounds · b/2]: column block r is R_r.
Tensor drawRotations(const VariantSpec& spec, int layer, int64_t d) {
    const int64_t half = spec.lshBuckets / 2, rounds = spec.lshRounds;
    SeededRandom random(streamSeed(spec.seed, kLshPurpose, uint32_t(layer)));
    Tensor rotations({d, rounds * half});
    for (int64_t r = 0; r < rounds; ++r)
        for (int64_t i = 0; i < d; ++i)
            for (int64_t c = 0; c < half; ++c)
                rotations.values()[std::size_t(i * rounds * half + r * half + c)] =
                    float(random.normal());
    return rotations;
}

// argmax [xR_r; −xR_r] of every row of projected [B, T, rounds · half], for round r.
std::vector<int32_t> bucketsOf(const Tensor& projected, int64_t round, int64_t half) {
    const int64_t width = projected.shape().back(), rows = int64_t(projected.size()) / width;
    std::vector<int32_t> buckets(static_cast<std::size_t>(rows));
    for (int64_t row = 0; row < rows; ++row) {
        const float* x = projected.data() + row * width + round * half;
        int32_t best = 0;
        for (int64_t j = 1; j < 2 * half; ++j) {
            const float value = j < half ? x[j] : -x[j - half];
            const float top = best < half ? x[best] : -x[best - half];
            if (value > top) best = int32_t(j);
        }
        buckets[std::size_t(row)] = best;
    }
    return buckets;
}

// One round's hashing, per query head: buckets of queries and keys and the sorted positions.
struct Round {
    std::vector<int32_t> queryBuckets, keyBuckets, order; // each [H · T]
};

Round hashRound(const Tensor& queryProjection, const Tensor& keyProjection, int64_t round,
                int64_t half, const Geometry& g) {
    Round r;
    r.queryBuckets = bucketsOf(queryProjection, round, half);
    const std::vector<int32_t> kvBuckets = bucketsOf(keyProjection, round, half);
    const int64_t group = g.heads / (int64_t(kvBuckets.size()) / g.tokens);
    r.keyBuckets.resize(r.queryBuckets.size());
    r.order.resize(r.queryBuckets.size());
    for (int64_t h = 0; h < g.heads; ++h) {
        std::copy_n(kvBuckets.begin() + (h / group) * g.tokens, g.tokens,
                    r.keyBuckets.begin() + h * g.tokens);
        const auto begin = r.order.begin() + h * g.tokens;
        std::iota(begin, begin + g.tokens, 0);
        const int32_t* bucket = r.queryBuckets.data() + h * g.tokens;
        std::stable_sort(begin, begin + g.tokens,
                         [bucket](int32_t a, int32_t b) { return bucket[a] < bucket[b]; });
    }
    return r;
}

// The position at sorted slot `slot` of head h, or −1 for the padding of the last chunk.
int32_t positionAt(const Round& r, const Geometry& g, int64_t h, int64_t slot) {
    return slot < g.tokens ? r.order[std::size_t(h * g.tokens + slot)] : -1;
}

// The position seen by window column `column` of chunk n, or −1 (padding, or no previous chunk).
int32_t keyPositionAt(const Round& r, const Geometry& g, int64_t h, int64_t n, int64_t column) {
    if (g.chunks == 1) return positionAt(r, g, h, column);
    if (column < g.chunk) return n == 0 ? -1 : positionAt(r, g, h, (n - 1) * g.chunk + column);
    return positionAt(r, g, h, n * g.chunk + column - g.chunk);
}

struct Windows {
    std::vector<int32_t> queryRows, keyRows,
        valueRows;              // rows of q [H·T], keys [H·T or Hkv·T], v [Hkv·T]
    std::vector<float> keyUsed; // [H · chunks · width] 1 for a real key
};

Windows windowIds(const Round& r, const Geometry& g, int64_t kvHeads, bool sharedQk) {
    Windows w;
    const int64_t group = g.heads / kvHeads;
    for (int64_t h = 0; h < g.heads; ++h) {
        for (int64_t slot = 0; slot < g.slots(); ++slot) {
            const int32_t i = positionAt(r, g, h, slot);
            w.queryRows.push_back(int32_t(h * g.tokens + (i < 0 ? 0 : i)));
        }
        for (int64_t n = 0; n < g.chunks; ++n)
            for (int64_t column = 0; column < g.width; ++column) {
                const int32_t j = keyPositionAt(r, g, h, n, column), at = j < 0 ? 0 : j;
                w.keyRows.push_back(int32_t((sharedQk ? h : h / group) * g.tokens + at));
                w.valueRows.push_back(int32_t((h / group) * g.tokens + at));
                w.keyUsed.push_back(j < 0 ? 0.0f : 1.0f);
            }
    }
    return w;
}

// Mask [H · chunks, c, width]: same bucket ∧ allowed (∧ not itself when sharedQk); a query left
// with no key gets its own key, which always sits in its window, and is marked in `fallback`
// [H · T] (by position) when given.
Tensor windowMask(const Round& r, const Geometry& g, const AttentionShape& shape, bool sharedQk,
                  std::vector<uint8_t>* fallback = nullptr) {
    Tensor mask({g.heads * g.chunks, g.chunk, g.width}, 0.0f);
    if (fallback) fallback->assign(std::size_t(g.heads * g.tokens), 0);
    const KeyMask rule = shape.keyMask();
    for (int64_t h = 0; h < g.heads; ++h)
        for (int64_t slot = 0; slot < g.slots(); ++slot) {
            const int32_t i = positionAt(r, g, h, slot);
            if (i < 0) continue;
            const int64_t n = slot / g.chunk;
            float* row = mask.values().data() + (h * g.slots() + slot) * g.width;
            int64_t self = 0, count = 0;
            for (int64_t column = 0; column < g.width; ++column) {
                const int32_t j = keyPositionAt(r, g, h, n, column);
                if (j < 0) continue;
                if (j == i) self = column;
                const bool sameBucket = r.keyBuckets[std::size_t(h * g.tokens + j)] ==
                                        r.queryBuckets[std::size_t(h * g.tokens + i)];
                const bool ok = sameBucket && rule.allows(i, j) && !(sharedQk && j == i);
                row[column] = ok ? 1.0f : 0.0f;
                count += ok;
            }
            if (count > 0) continue;
            row[self] = 1.0f;
            if (fallback) (*fallback)[std::size_t(h * g.tokens + i)] = 1;
        }
    return mask;
}

// Rows of x [B, T, d] divided by their norms (Reformer's shared-QK keys).
DeviceTensor normalisedRows(Backend& backend, const DeviceTensor& x) {
    const int64_t rows = x.dim(0) * x.dim(1), d = x.dim(2);
    DeviceTensor squares = backend.allocate(x.shape());
    backend.map(x, MapOp::Square, 1.0f, 0.0f, squares);
    DeviceTensor norms = backend.allocate({rows, 1});
    backend.reduceRows(squares, true, norms);
    backend.map(norms, MapOp::Sqrt, 1.0f, 0.0f, norms);
    DeviceTensor out = backend.allocate({rows, d});
    backend.binary(x.reshaped({rows, d}), norms, BinaryOp::Div, out);
    return out;
}

// log Σ_j exp s_ij over the allowed keys of each row of scores [R, N] → [R, 1].
DeviceTensor logNormaliser(Backend& backend, const DeviceTensor& scores, const DeviceTensor& mask) {
    const int64_t n = scores.shape().back(), rows = scores.size() / n;
    const float lowest = std::numeric_limits<float>::lowest();
    DeviceTensor fill = backend.allocate(mask.shape());
    backend.map(mask, MapOp::Affine, -lowest, lowest, fill);
    DeviceTensor masked = backend.allocate({rows, n});
    backend.binary(scores, mask, BinaryOp::Mul, masked);
    backend.binary(masked, fill, BinaryOp::Add, masked);
    DeviceTensor maxima = backend.allocate({rows, 1});
    backend.reduceRows(masked, false, maxima);
    backend.binary(masked, maxima, BinaryOp::Sub, masked);
    backend.map(masked, MapOp::Exp, 1.0f, 0.0f, masked);
    DeviceTensor sums = backend.allocate({rows, 1});
    backend.reduceRows(masked, true, sums);
    backend.map(sums, MapOp::Log, 1.0f, 0.0f, sums);
    backend.binary(sums, maxima, BinaryOp::Add, sums);
    return sums;
}

struct RoundResult {
    Round hashing;
    Windows windows;
    Tensor mask;
    std::vector<uint8_t>
        fallback; // [H · T] 1 where the query attends its own key for want of any other
    DeviceTensor scores, weights, context,
        logNorm; // [H·chunks, c, width] ×2, [H·slots, d], [H·slots, 1]
};

RoundResult attendRound(Backend& backend, const LayerAttention& layer, const AttentionShape& shape,
                        const DeviceTensor& keyTable, Round hashing, const Geometry& g,
                        bool sharedQk, bool combine) {
    RoundResult r;
    r.hashing = std::move(hashing);
    const int64_t kvHeads = layer.v.dim(0), d = layer.q.dim(2), blocks = g.heads * g.chunks;
    r.windows = windowIds(r.hashing, g, kvHeads, sharedQk);
    r.mask = windowMask(r.hashing, g, shape, sharedQk, &r.fallback);
    const DeviceTensor queries = gathered(backend, layer.q.reshaped({g.heads * g.tokens, d}),
                                          r.windows.queryRows, {blocks, g.chunk, d});
    const DeviceTensor keys = gathered(backend, keyTable, r.windows.keyRows, {blocks, g.width, d});
    const DeviceTensor values =
        gathered(backend, layer.v.reshaped({kvHeads * g.tokens, layer.v.dim(2)}),
                 r.windows.valueRows, {blocks, g.width, layer.v.dim(2)});
    r.scores = backend.allocate({blocks, g.chunk, g.width});
    backend.matmul(queries, keys, true, layer.scale, r.scores);
    const DeviceTensor mask = backend.upload(r.mask);
    r.weights = backend.allocate(r.scores.shape());
    backend.softmax(r.scores, &mask, r.weights);
    DeviceTensor context = backend.allocate({blocks, g.chunk, layer.v.dim(2)});
    backend.matmul(r.weights, values, false, 1.0f, context);
    r.context = context.reshaped({g.heads * g.slots(), layer.v.dim(2)});
    if (combine) r.logNorm = logNormaliser(backend, r.scores, mask);
    return r;
}

// Per round, the weight of each sorted slot's output [H · slots] (0 for padding slots):
// exp(lse_r − log Σ_r exp lse_r), where a round in which the query fell back on its own key
// counts lse_r − kFallbackPenalty (Reformer's self mask, −1e5 in trax), so that it weighs
// nothing unless every round fell back (then the rounds share equally). In double: the penalty
// would swallow an f32 lse's digits.
std::vector<std::vector<float>>
roundWeights(Backend& backend, const std::vector<RoundResult>& rounds, const Geometry& g) {
    std::vector<std::vector<float>> weights(
        rounds.size(), std::vector<float>(std::size_t(g.heads * g.slots()), 0.0f));
    std::vector<std::vector<double>> lse(rounds.size(),
                                         std::vector<double>(std::size_t(g.heads * g.tokens), 0.0));
    for (std::size_t r = 0; r < rounds.size(); ++r) {
        const Tensor norms = rounds.size() > 1 ? backend.download(rounds[r].logNorm) : Tensor();
        for (int64_t h = 0; h < g.heads; ++h)
            for (int64_t slot = 0; slot < g.tokens; ++slot) {
                const std::size_t at =
                    std::size_t(h * g.tokens + positionAt(rounds[r].hashing, g, h, slot));
                const double penalty = rounds[r].fallback[at] ? kFallbackPenalty : 0.0;
                lse[r][at] =
                    norms.empty() ? 0.0 : double(norms.data()[h * g.slots() + slot]) - penalty;
            }
    }
    for (std::size_t r = 0; r < rounds.size(); ++r)
        for (int64_t h = 0; h < g.heads; ++h)
            for (int64_t slot = 0; slot < g.tokens; ++slot) {
                const std::size_t at =
                    std::size_t(h * g.tokens + positionAt(rounds[r].hashing, g, h, slot));
                double top = lse[0][at];
                for (const auto& other : lse)
                    top = std::max(top, other[at]);
                double total = 0.0;
                for (const auto& other : lse)
                    total += std::exp(other[at] - top);
                weights[r][std::size_t(h * g.slots() + slot)] =
                    float(std::exp(lse[r][at] - top) / total);
            }
    return weights;
}

// Scores (lowest where unattended) or weights (0) of every round scattered to [H, T, T].
DeviceTensor scatteredMap(Backend& backend, const std::vector<RoundResult>& rounds,
                          const std::vector<std::vector<float>>& weights, const Geometry& g,
                          bool scores) {
    const int64_t t = g.tokens;
    Tensor map({g.heads, t, t}, scores ? std::numeric_limits<float>::lowest() : 0.0f);
    for (std::size_t r = 0; r < rounds.size(); ++r) {
        const Tensor values = backend.download(scores ? rounds[r].scores : rounds[r].weights);
        for (int64_t h = 0; h < g.heads; ++h)
            for (int64_t slot = 0; slot < g.tokens; ++slot) {
                const int64_t i = positionAt(rounds[r].hashing, g, h, slot), n = slot / g.chunk;
                const int64_t row = h * g.slots() + slot;
                for (int64_t column = 0; column < g.width; ++column) {
                    const int32_t j = keyPositionAt(rounds[r].hashing, g, h, n, column);
                    if (j < 0 || rounds[r].mask.data()[row * g.width + column] == 0.0f) continue;
                    float& cell = map.values()[std::size_t((h * t + i) * t + j)];
                    const float value = values.data()[row * g.width + column];
                    cell = scores ? value : cell + weights[r][std::size_t(row)] * value;
                }
            }
    }
    return backend.upload(map);
}

Tensor asFloats(const std::vector<int32_t>& values, int64_t heads, int64_t tokens) {
    Tensor out({heads, tokens});
    std::transform(values.begin(), values.end(), out.values().begin(),
                   [](int32_t v) { return float(v); });
    return out;
}

void addInternals(Backend& backend, const std::vector<RoundResult>& rounds, const Geometry& g,
                  bool sharedQk, AttentionOutputs& out) {
    for (std::size_t r = 0; r < rounds.size(); ++r) {
        const std::string suffix = r == 0 ? "" : "." + std::to_string(r);
        out.internals["lsh_buckets" + suffix] =
            backend.upload(asFloats(rounds[r].hashing.queryBuckets, g.heads, g.tokens));
        out.internals["lsh_order" + suffix] =
            backend.upload(asFloats(rounds[r].hashing.order, g.heads, g.tokens));
        if (!sharedQk)
            out.internals["lsh_key_buckets" + suffix] =
                backend.upload(asFloats(rounds[r].hashing.keyBuckets, g.heads, g.tokens));
    }
}

// Queries and keys projected by every round's R, on the host: [H, T, rounds · b/2] each (the
// keys' are the queries' with shared QK).
struct Projections {
    Tensor queries, keys;
};

Projections projections(Backend& backend, const LayerAttention& layer, const VariantSpec& spec) {
    const int64_t d = layer.q.dim(2), tokens = layer.q.dim(1);
    const DeviceTensor rotations = backend.upload(drawRotations(spec, layer.layer, d));
    DeviceTensor queryProjection = backend.allocate({layer.q.dim(0), tokens, rotations.dim(1)});
    backend.matmul(layer.q, rotations, false, 1.0f, queryProjection);
    Projections p{backend.download(queryProjection), {}};
    p.keys = p.queries;
    if (!spec.sharedQk) {
        DeviceTensor keyProjection = backend.allocate({layer.k.dim(0), tokens, rotations.dim(1)});
        backend.matmul(layer.k, rotations, false, 1.0f, keyProjection);
        p.keys = backend.download(keyProjection);
    }
    return p;
}
} // namespace

LshPairs lshPairs(Backend& backend, const LayerAttention& layer, const VariantSpec& spec,
                  const AttentionPlan& plan) {
    const Geometry g = geometryOf(layer, spec);
    const Projections p = projections(backend, layer, spec);
    // Per query, the keys of the rounds with real keys; the rounds in which it fell back on its
    // own key count only when every round did (their weight is exp(−kFallbackPenalty) beside
    // the others, see roundWeights).
    std::vector<std::vector<int32_t>> keys(std::size_t(g.heads * g.tokens)),
        fallbackKeys(keys.size());
    for (int64_t r = 0; r < spec.lshRounds; ++r) {
        const Round round = hashRound(p.queries, p.keys, r, spec.lshBuckets / 2, g);
        std::vector<uint8_t> fallback;
        const Tensor mask = windowMask(round, g, plan.shape, spec.sharedQk, &fallback);
        for (int64_t h = 0; h < g.heads; ++h)
            for (int64_t slot = 0; slot < g.tokens; ++slot) {
                const int32_t i = positionAt(round, g, h, slot);
                const std::size_t at = std::size_t(h * g.tokens + i);
                const float* row = mask.data() + (h * g.slots() + slot) * g.width;
                for (int64_t column = 0; column < g.width; ++column)
                    if (row[column] != 0.0f)
                        (fallback[at] ? fallbackKeys : keys)[at].push_back(
                            keyPositionAt(round, g, h, slot / g.chunk, column));
            }
    }
    for (std::size_t at = 0; at < keys.size(); ++at)
        if (keys[at].empty()) keys[at] = std::move(fallbackKeys[at]);
    LshPairs pairs;
    pairs.pattern.heads = int(g.heads);
    pairs.pattern.tokens = g.tokens;
    pairs.pattern.rowStart.push_back(0);
    for (const std::vector<int32_t>& row : keys) {
        pairs.pattern.keys.insert(pairs.pattern.keys.end(), row.begin(), row.end());
        pairs.pattern.rowStart.push_back(int32_t(pairs.pattern.keys.size()));
    }
    if (spec.sharedQk) pairs.sharedKeys = backend.download(normalisedRows(backend, layer.q));
    return pairs;
}

AttentionOutputs lshAttention(Backend& backend, const LayerAttention& layer,
                              const VariantSpec& spec, const AttentionPlan& plan,
                              const AttentionWants& wants) {
    const Geometry g = geometryOf(layer, spec);
    const int64_t d = layer.q.dim(2), half = spec.lshBuckets / 2, kvHeads = layer.k.dim(0);
    const Projections p = projections(backend, layer, spec);
    const DeviceTensor keyTable = spec.sharedQk ? normalisedRows(backend, layer.q)
                                                : layer.k.reshaped({kvHeads * g.tokens, d});

    std::vector<RoundResult> rounds;
    for (int64_t r = 0; r < spec.lshRounds; ++r)
        rounds.push_back(attendRound(backend, layer, plan.shape, keyTable,
                                     hashRound(p.queries, p.keys, r, half, g), g, spec.sharedQk,
                                     spec.lshRounds > 1));
    const std::vector<std::vector<float>> weights = roundWeights(backend, rounds, g);

    AttentionOutputs out;
    out.context = backend.upload(Tensor({g.heads, g.tokens, layer.v.dim(2)}, 0.0f));
    DeviceTensor flat = out.context.reshaped({g.heads * g.tokens, layer.v.dim(2)});
    for (std::size_t r = 0; r < rounds.size(); ++r)
        backend.scatterAddRows(rounds[r].context, rounds[r].windows.queryRows, weights[r], flat);
    if (wants.probabilities) out.probabilities = scatteredMap(backend, rounds, weights, g, false);
    if (wants.scores) out.scores = scatteredMap(backend, rounds, weights, g, true);
    if (wants.internals) addInternals(backend, rounds, g, spec.sharedQk, out);
    return out;
}
} // namespace headlight::variants
