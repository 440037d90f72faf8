#include "analysis/clustering.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace headlight::analysis {
namespace {

// The working state: clusters live in slots; a merge keeps the lower slot, so a slot's index is
// always the smallest leaf its cluster holds, which gives the tie-breaking order for free.
struct ClusterState {
    int64_t count = 0;
    std::vector<double> distance;             // [N, N] current cluster-to-cluster distances
    std::vector<bool> active;                 // [N]
    std::vector<int64_t> id;                  // [N] SciPy-style cluster id in each slot
    std::vector<int64_t> size;                // [N]
    std::vector<std::vector<int64_t>> leaves; // [N] leaves of each slot, in display order

    double& at(int64_t a, int64_t b) { return distance[a * count + b]; }
};

// [N, N] tensor -> state with the symmetrised distances and one leaf per slot.
ClusterState initialState(const Tensor& distances) {
    if (distances.rank() != 2 || distances.dim(0) != distances.dim(1))
        throw std::invalid_argument("clustering needs a square [N, N] matrix, got " +
                                    distances.shapeString());
    ClusterState state;
    state.count = distances.dim(0);
    const auto n = static_cast<std::size_t>(state.count);
    state.distance.assign(n * n, 0.0);
    const float* d = distances.data();
    for (int64_t a = 0; a < state.count; ++a)
        for (int64_t b = 0; b < state.count; ++b) {
            if (!std::isfinite(d[a * state.count + b]))
                throw std::invalid_argument("clustering distances must be finite");
            state.at(a, b) =
                0.5 * (double(d[a * state.count + b]) + double(d[b * state.count + a]));
        }
    state.active.assign(n, true);
    state.size.assign(n, 1);
    for (int64_t a = 0; a < state.count; ++a) {
        state.id.push_back(a);
        state.leaves.push_back({a});
    }
    return state;
}

// state -> the active slot pair (a, b), a < b, at the smallest distance; scanning in slot order
// with a strict comparison keeps the lexicographically first of equal pairs.
std::pair<int64_t, int64_t> closestPair(ClusterState& state) {
    std::pair<int64_t, int64_t> best{-1, -1};
    double bestDistance = std::numeric_limits<double>::infinity();
    for (int64_t a = 0; a < state.count; ++a) {
        if (!state.active[a]) continue;
        for (int64_t b = a + 1; b < state.count; ++b) {
            if (!state.active[b]) continue;
            if (best.first < 0 || state.at(a, b) < bestDistance) {
                best = {a, b};
                bestDistance = state.at(a, b);
            }
        }
    }
    return best;
}

// Merges slot b into slot a (a < b), updating distances by the Lance-Williams rule for average
// linkage: d(k, a∪b) = (n_a d(k, a) + n_b d(k, b)) / (n_a + n_b).
Merge mergeSlots(ClusterState& state, int64_t a, int64_t b, int64_t newId) {
    const double na = double(state.size[a]);
    const double nb = double(state.size[b]);
    const Merge merge{state.id[a], state.id[b], state.at(a, b), state.size[a] + state.size[b]};
    for (int64_t k = 0; k < state.count; ++k) {
        if (!state.active[k] || k == a || k == b) continue;
        const double updated = (na * state.at(k, a) + nb * state.at(k, b)) / (na + nb);
        state.at(k, a) = updated;
        state.at(a, k) = updated;
    }
    state.leaves[a].insert(state.leaves[a].end(), state.leaves[b].begin(), state.leaves[b].end());
    state.leaves[b].clear();
    state.active[b] = false;
    state.size[a] = merge.size;
    state.id[a] = newId;
    return merge;
}
} // namespace

Dendrogram averageLinkage(const Tensor& distances) {
    // [N, N] -> N - 1 merges and [N] leaf order
    ClusterState state = initialState(distances);
    Dendrogram dendrogram;
    for (int64_t step = 0; step + 1 < state.count; ++step) {
        const auto [a, b] = closestPair(state);
        dendrogram.merges.push_back(mergeSlots(state, a, b, state.count + step));
    }
    // Slot 0 holds leaf 0, so it is never merged away and ends up holding every leaf.
    if (state.count > 0) dendrogram.leafOrder = state.leaves[0];
    return dendrogram;
}
} // namespace headlight::analysis
