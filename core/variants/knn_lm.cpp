#include "variants/knn_lm.h"

#include "variants/applicability.h"

#include <QFile>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <queue>
#include <utility>

namespace headlight::variants {
namespace {

// Why a cap: a pass costs T² in attention, and a key needs no context longer than this.
constexpr int64_t kMaxChunk = 1024;
constexpr qint64 kMaxTextBytes = 8 << 20;
constexpr double kMaxKeyBytes = double(int64_t(1) << 30);
// Queries ranked per product: as many as fill 128 MB of [rows, N] f32 products. Why so many: the
// product streams every key once per block, so wide blocks keep it from being memory-bound.
constexpr double kBlockBytes = 128.0 * (1 << 20);

// The keys of one chunk's pass: rows 0 .. n − 2 of its final states, each followed by a token.
void appendChunk(KnnDatastore& store, int64_t& row, const Tensor& states,
                 std::span<const int32_t> chunk) {
    const int64_t width = states.dim(1), pairs = int64_t(chunk.size()) - 1;
    std::copy_n(states.data(), pairs * width, store.keys.data() + row * width);
    store.values.insert(store.values.end(), chunk.begin() + 1, chunk.end());
    row += pairs;
}

void checkQueries(const KnnDatastore& store, const Tensor& queries, int k) {
    if (store.size() < k)
        throw VariantError("kNN-LM: k = " + std::to_string(k) + " but the datastore holds only " +
                           std::to_string(store.size()) + " entries");
    if (queries.rank() != 2 || queries.dim(1) != store.keys.dim(1))
        throw VariantError("kNN-LM: the datastore's keys have " +
                           std::to_string(store.keys.dim(1)) + " values and the queries " +
                           queries.shapeString() +
                           "; build the datastore with the model that queries it");
}

double squaredNorm(const float* a, int64_t width) {
    double sum = 0.0;
    for (int64_t i = 0; i < width; ++i)
        sum += double(a[i]) * double(a[i]);
    return sum;
}

double exactDistance(const float* a, const float* b, int64_t width) {
    double sum = 0.0;
    for (int64_t i = 0; i < width; ++i) {
        const double d = double(a[i]) - double(b[i]);
        sum += d * d;
    }
    return sum;
}

// The k-th smallest of `values`, in one pass with a max-heap of the k smallest so far.
float kthSmallest(std::span<const float> values, int k) {
    std::priority_queue<float> heap(values.begin(), values.begin() + k);
    for (std::size_t j = std::size_t(k); j < values.size(); ++j)
        if (values[j] < heap.top()) {
            heap.pop();
            heap.push(values[j]);
        }
    return heap.top();
}

// The k nearest keys of one query, from `ranked` = ‖k_j‖² − 2 q·k_j (‖q‖² is common to all keys)
// computed in f32. Every key that f32 rounding could place among the k nearest gets its distance
// recomputed exactly, so the result is the exact brute-force answer.
void selectNearest(const KnnDatastore& store, const float* query, std::span<const float> ranked,
                   double largestKey, int k, int64_t slot, Neighbours& out) {
    const int64_t width = store.keys.dim(1);
    // Why this slack: a length-D f32 dot product or norm is off by at most (D + 1)·u·(‖q‖ + ‖k‖)²
    // (Higham, §3.1), and a key is missed only if its error and the k-th's add up past the gap.
    const double u = std::numeric_limits<float>::epsilon() / 2.0;
    const double reach = std::sqrt(squaredNorm(query, width)) + largestKey;
    const double cutoff =
        double(kthSmallest(ranked, k)) + 2.0 * double(width + 1) * u * reach * reach;
    std::vector<std::pair<double, int64_t>> candidates;
    for (std::size_t j = 0; j < ranked.size(); ++j)
        if (double(ranked[j]) <= cutoff)
            candidates.emplace_back(
                exactDistance(query, store.keys.data() + int64_t(j) * width, width), int64_t(j));
    std::partial_sort(candidates.begin(), candidates.begin() + k, candidates.end());
    for (int i = 0; i < k; ++i) {
        out.index[std::size_t(slot * k + i)] = candidates[std::size_t(i)].second;
        out.distance[std::size_t(slot * k + i)] = float(candidates[std::size_t(i)].first);
    }
}

// What the mixture says about one position.
struct TokenReadout {
    int32_t target = 0, knnTop = 0, mixTop = 0;
    double pLm = 0.0, pKnn = 0.0, pMix = 0.0;
};

std::vector<double> softmax(std::span<const float> logits) {
    const double top = double(*std::max_element(logits.begin(), logits.end()));
    std::vector<double> p(logits.size());
    double sum = 0.0;
    for (std::size_t v = 0; v < p.size(); ++v)
        sum += p[v] = std::exp(double(logits[v]) - top);
    for (double& x : p)
        x /= sum;
    return p;
}

int32_t argmax(const std::vector<double>& p) {
    return int32_t(std::max_element(p.begin(), p.end()) - p.begin());
}

// `next` is the token that follows in the input, or −1 where none is known: then the readout
// scores the mixture's own top prediction.
TokenReadout readToken(std::span<const float> logits, const std::vector<double>& pKnn,
                       double lambda, int32_t next) {
    const std::vector<double> pLm = softmax(logits);
    std::vector<double> pMix(pLm.size());
    for (std::size_t v = 0; v < pMix.size(); ++v)
        pMix[v] = lambda * pKnn[v] + (1.0 - lambda) * pLm[v];
    TokenReadout r;
    r.knnTop = argmax(pKnn);
    r.mixTop = argmax(pMix);
    r.target = next >= 0 ? next : r.mixTop;
    const std::size_t t = std::size_t(r.target);
    r.pLm = pLm[t], r.pKnn = pKnn[t], r.pMix = pMix[t];
    return r;
}

Tensor column(const std::vector<TokenReadout>& readouts, double TokenReadout::*field) {
    Tensor result({int64_t(readouts.size())});
    for (std::size_t t = 0; t < readouts.size(); ++t)
        result.values()[t] = float(readouts[t].*field);
    return result;
}

Tensor column(const std::vector<TokenReadout>& readouts, int32_t TokenReadout::*field) {
    Tensor result({int64_t(readouts.size())});
    for (std::size_t t = 0; t < readouts.size(); ++t)
        result.values()[t] = float(readouts[t].*field);
    return result;
}

void recordInternals(const KnnDatastore& store, const Neighbours& neighbours,
                     const std::vector<TokenReadout>& readouts, Trace& trace) {
    const std::vector<int64_t> shape{neighbours.queries, neighbours.k};
    Tensor index(shape), distance(shape, neighbours.distance), next(shape);
    for (std::size_t i = 0; i < neighbours.index.size(); ++i) {
        index.values()[i] = float(neighbours.index[i]);
        next.values()[i] = float(store.values[std::size_t(neighbours.index[i])]);
    }
    trace.internals["knn_neighbors"] = std::move(index);
    trace.internals["knn_distances"] = std::move(distance);
    trace.internals["knn_next_token"] = std::move(next);
    trace.internals["knn_target"] = column(readouts, &TokenReadout::target);
    trace.internals["knn_top"] = column(readouts, &TokenReadout::knnTop);
    trace.internals["mix_top"] = column(readouts, &TokenReadout::mixTop);
    trace.internals["p_lm"] = column(readouts, &TokenReadout::pLm);
    trace.internals["p_knn"] = column(readouts, &TokenReadout::pKnn);
    trace.internals["p_mix"] = column(readouts, &TokenReadout::pMix);
}

int32_t nextToken(const Trace& trace, std::size_t t) {
    const bool known = t + 1 < trace.ids.size() && trace.valid[t + 1];
    return known ? trace.ids[t + 1] : -1;
}
} // namespace

int64_t datastoreChunkLength(const ModelSpec& model) {
    const int64_t positions = model.maxPositions - model.positionOffset;
    return positions > 1 ? std::min(positions, kMaxChunk) : kMaxChunk;
}

std::vector<std::vector<int32_t>> chunkForDatastore(std::span<const int32_t> ids, int64_t length) {
    if (length < 2) throw VariantError("kNN-LM: a datastore chunk needs at least two tokens");
    std::vector<std::vector<int32_t>> chunks;
    const std::size_t step = std::size_t(length - 1);
    for (std::size_t first = 0; first + 1 < ids.size(); first += step) {
        const std::size_t last = std::min(ids.size(), first + std::size_t(length));
        chunks.emplace_back(ids.begin() + std::ptrdiff_t(first),
                            ids.begin() + std::ptrdiff_t(last));
    }
    return chunks;
}

std::string readDatastoreText(const std::string& path) {
    QFile file(QString::fromStdString(path));
    if (!file.open(QIODevice::ReadOnly))
        throw VariantError("kNN-LM: cannot read the datastore text " + path);
    if (file.size() > kMaxTextBytes)
        throw VariantError("kNN-LM: the datastore text " + path + " is larger than 8 MB");
    const std::string text = file.readAll().toStdString();
    if (text.empty()) throw VariantError("kNN-LM: the datastore text " + path + " is empty");
    return text;
}

KnnDatastore buildDatastore(const TransformerModel& model,
                            const std::vector<std::vector<int32_t>>& chunks,
                            const VariantSpec& variant, const DatastoreProgress& progress) {
    // Why first: a model the mixture refuses would otherwise build its keys for nothing.
    checkApplies(variant, model.spec());
    int64_t pairs = 0;
    for (const std::vector<int32_t>& chunk : chunks)
        pairs += std::max<int64_t>(int64_t(chunk.size()) - 1, 0);
    if (pairs == 0) throw VariantError("kNN-LM: the datastore text needs at least two tokens");
    const int64_t width = model.spec().hidden;
    if (double(pairs) * double(width) * sizeof(float) > kMaxKeyBytes)
        throw VariantError("kNN-LM: the datastore would hold " + std::to_string(pairs) +
                           " keys of " + std::to_string(width) +
                           " values, more than 1 GiB; use a shorter text");
    VariantSpec lm = variant;
    lm.knn.reset();
    CaptureRequest capture;
    capture.probabilities = false;
    KnnDatastore store;
    store.keys = Tensor({pairs, width});
    store.values.reserve(std::size_t(pairs));
    int64_t row = 0;
    const int64_t total = int64_t(chunks.size());
    for (int64_t c = 0; c < total; ++c) {
        if (progress && !progress(c, total)) throw DatastoreCancelled();
        const std::vector<int32_t>& chunk = chunks[std::size_t(c)];
        if (chunk.size() > 1)
            appendChunk(store, row, model.forward({chunk, {}, {}}, capture, lm).lastHiddenState,
                        chunk);
    }
    if (progress && !progress(total, total)) throw DatastoreCancelled();
    const Eigen::VectorXf norms = store.keys.matrix().rowwise().squaredNorm();
    store.squaredNorms.assign(norms.data(), norms.data() + norms.size());
    return store;
}

Neighbours nearestNeighbours(const KnnDatastore& store, const Tensor& queries, int k) {
    checkQueries(store, queries, k);
    Neighbours result;
    result.queries = queries.dim(0);
    result.k = k;
    result.index.resize(std::size_t(result.queries * k));
    result.distance.resize(result.index.size());
    const double largestKey =
        std::sqrt(double(*std::max_element(store.squaredNorms.begin(), store.squaredNorms.end())));
    const ConstMatrixMap keys = store.keys.matrix(), q = queries.matrix();
    const Eigen::Map<const Eigen::RowVectorXf> norms(store.squaredNorms.data(), store.size());
    const auto block =
        std::clamp<int64_t>(int64_t(kBlockBytes / (sizeof(float) * double(store.size()))), 16, 512);
    for (int64_t first = 0; first < result.queries; first += block) {
        const int64_t rows = std::min(block, result.queries - first);
        RowMatrix ranked = -2.0f * (q.middleRows(first, rows) * keys.transpose());
        ranked.rowwise() += norms;
#pragma omp parallel for schedule(dynamic)
        for (int64_t r = 0; r < rows; ++r)
            selectNearest(store, queries.data() + (first + r) * queries.dim(1),
                          {ranked.data() + r * ranked.cols(), std::size_t(ranked.cols())},
                          largestKey, k, first + r, result);
    }
    return result;
}

std::vector<double> neighbourWeights(std::span<const float> distances, float temperature) {
    std::vector<double> weights(distances.size());
    if (distances.empty()) return weights;
    // Why the shift by the nearest distance: exp(−d/τ) underflows for the distances of real
    // hidden states; the common factor cancels in the normalisation.
    const double nearest = double(distances.front());
    double total = 0.0;
    for (std::size_t i = 0; i < distances.size(); ++i)
        total += weights[i] = std::exp(-(double(distances[i]) - nearest) / temperature);
    for (double& w : weights)
        w /= total;
    return weights;
}

std::vector<double> knnDistribution(const KnnDatastore& store, const Neighbours& neighbours,
                                    int64_t query, int64_t vocab, float temperature) {
    std::vector<double> p(std::size_t(vocab), 0.0);
    const std::size_t first = std::size_t(query * neighbours.k);
    const std::vector<double> weights = neighbourWeights(
        std::span(neighbours.distance).subspan(first, std::size_t(neighbours.k)), temperature);
    for (std::size_t i = 0; i < weights.size(); ++i)
        p[std::size_t(store.values[std::size_t(neighbours.index[first + i])])] += weights[i];
    return p;
}

Trace forwardKnn(const TransformerModel& model, const ModelInput& input,
                 const CaptureRequest& capture, const VariantSpec& variant,
                 const KnnDatastore& store) {
    if (!variant.knn) throw VariantError("kNN-LM: the variant has no knn section");
    checkApplies(variant, model.spec());
    const auto start = std::chrono::steady_clock::now();
    VariantSpec lm = variant;
    lm.knn.reset();
    CaptureRequest withLogits = capture;
    withLogits.logits = true;
    Trace trace = model.forward(input, withLogits, lm);
    const KnnLm& knn = *variant.knn;
    const Neighbours neighbours = nearestNeighbours(store, trace.lastHiddenState, knn.k);
    const int64_t vocab = trace.logits.dim(1);
    std::vector<TokenReadout> readouts;
    for (int64_t t = 0; t < neighbours.queries; ++t) {
        const std::span<const float> logits =
            trace.logits.values().subspan(std::size_t(t * vocab), std::size_t(vocab));
        readouts.push_back(readToken(logits,
                                     knnDistribution(store, neighbours, t, vocab, knn.temperature),
                                     knn.lambda, nextToken(trace, std::size_t(t))));
    }
    if (capture.internals) recordInternals(store, neighbours, readouts, trace);
    if (!capture.logits) trace.logits = Tensor{};
    trace.forwardMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return trace;
}
} // namespace headlight::variants
