#pragma once
// Average-linkage (UPGMA) agglomerative clustering of a distance matrix, for ordering heads in
// the head × head JSD view so that heads that attend alike sit next to each other.

#include "tensor/tensor.h"

#include <cstdint>
#include <vector>

namespace headlight::analysis {

// One agglomeration step, numbered as SciPy's linkage: ids below N are leaves, merge i creates
// cluster N + i.
struct Merge {
    int64_t left = 0;      // the cluster holding the smaller leaf index
    int64_t right = 0;     // the other cluster
    double distance = 0.0; // average distance between the two clusters' members
    int64_t size = 0;      // leaves in the merged cluster
};

struct Dendrogram {
    std::vector<Merge> merges;      // N - 1 steps, in merge order
    std::vector<int64_t> leafOrder; // [N] leaves left to right: the display order
};

// [N, N] distances -> dendrogram. The matrix is symmetrised as (d_ij + d_ji) / 2; the diagonal is
// ignored. Deterministic ties: among equal closest pairs the one whose clusters' smallest leaf
// indices (a, b), a < b, come first lexicographically merges; in the leaf order the cluster with
// the smaller smallest leaf goes left. Throws std::invalid_argument for a non-square or
// non-finite matrix.
Dendrogram averageLinkage(const Tensor& distances);
} // namespace headlight::analysis
