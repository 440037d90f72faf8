#pragma once
// Item 18, kNN-LM (Khandelwal et al. 2020): the checkpoint's next-token distribution mixed with
// one read from a datastore of (context state, next token) pairs built from a user text:
//   p(y | x) = λ·p_kNN(y | x) + (1 − λ)·p_LM(y | x)
//   p_kNN(y | x) ∝ Σ_{i ∈ N(x), w_i = y} exp(−d(k_i, f(x)) / temperature)
// N(x) are the k nearest keys by squared L2 distance d, found exactly by brute force.
//
// The key f(x) is the final hidden state after the final norm, the very vector the tied LM head
// reads, where Khandelwal et al. take the input of the last layer's FFN. Why: it is the state the
// checkpoint predicts from, it needs no hook inside a layer, and every backend already returns it.
// INF-EXACT: with λ = 0 the checkpoint's own distribution; the datastore must come from the
// same checkpoint (and the same variant) as the queries.
//
// Index: KnnDatastore · datastoreChunkLength · chunkForDatastore · readDatastoreText ·
// DatastoreCancelled · buildDatastore · Neighbours · nearestNeighbours · neighbourWeights ·
// knnDistribution · forwardKnn

#include "model/transformer.h"
#include "tensor/tensor.h"
#include "variants/variant_spec.h"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace headlight::variants {

struct KnnDatastore {
    Tensor keys;                     // [N, D] f32
    std::vector<int32_t> values;     // [N] the token that followed each key's context
    std::vector<float> squaredNorms; // [N] ‖k_i‖², for the ranking product
    int64_t size() const { return int64_t(values.size()); }
};

// The tokens one datastore pass takes: the model's positions, at most 1024.
int64_t datastoreChunkLength(const ModelSpec& model);
// Splits a token stream into chunks of `length` that overlap by one token, so that every
// (token, next token) pair is a key of exactly one chunk.
std::vector<std::vector<int32_t>> chunkForDatastore(std::span<const int32_t> ids, int64_t length);
// Reads a UTF-8 datastore text; throws VariantError when it is missing, empty or over 8 MB.
std::string readDatastoreText(const std::string& path);
// Thrown by buildDatastore when its progress callback asks it to stop.
class DatastoreCancelled : public VariantError {
public:
    DatastoreCancelled()
        : VariantError("kNN-LM: the datastore build was cancelled") {}
};
// Called before each chunk's pass and once at the end with (chunks done, chunks); returning
// false stops the build.
using DatastoreProgress = std::function<bool(int64_t done, int64_t total)>;
// Runs `model` (with `variant`, less its knn section) over each chunk and keeps the key of every
// position that has a next token in its chunk. Throws VariantError when the chunks hold no pair
// or the keys would pass 1 GiB, DatastoreCancelled when `progress` returns false.
KnnDatastore buildDatastore(const TransformerModel& model,
                            const std::vector<std::vector<int32_t>>& chunks,
                            const VariantSpec& variant = {},
                            const DatastoreProgress& progress = {});

struct Neighbours {
    int64_t queries = 0, k = 0;
    std::vector<int64_t>
        index; // [queries, k] datastore rows, nearest first (ties: lower row first)
    std::vector<float> distance; // [queries, k] squared L2 distances
};
// The k nearest keys of each row of queries [T, D]. Throws VariantError when the datastore
// holds fewer than k keys or keys of another width.
Neighbours nearestNeighbours(const KnnDatastore& store, const Tensor& queries, int k);
// The kernel of p_kNN: each of a query's neighbours weighted exp(−d_i / temperature), normalised
// to sum to 1 (distances nearest first). p_kNN(y) is the sum of the weights of the neighbours
// whose stored next token is y; knnDistribution and the window's λ re-mix both use this.
std::vector<double> neighbourWeights(std::span<const float> distances, float temperature);
// p_kNN over the vocabulary [V] for query `query` (sums to 1).
std::vector<double> knnDistribution(const KnnDatastore& store, const Neighbours& neighbours,
                                    int64_t query, int64_t vocab, float temperature);

// The forward pass of a variant with a knn section, mixed with the datastore. Trace::logits stays
// the LM head's (kept only when `capture` asks for it); with capture.internals the trace gains
// knn_neighbors, knn_distances, knn_next_token [T, k] and knn_target, p_lm, p_knn, p_mix,
// knn_top, mix_top [T] (docs/variants.md, item 18).
Trace forwardKnn(const TransformerModel& model, const ModelInput& input,
                 const CaptureRequest& capture, const VariantSpec& variant,
                 const KnnDatastore& store);
} // namespace headlight::variants
