#include "knn_readout.h"

#include <algorithm>
#include <cmath>

namespace headlight::app {
namespace {

const Tensor& internal(const ForwardResult& result, const char* name) {
    return result.internals.at(name);
}

float valueAt(const Tensor& t, int64_t i) {
    return t.values()[std::size_t(i)];
}

bool hasNextToken(const ForwardResult& result, int t) {
    return t + 1 < result.tokenCount() &&
           (std::size_t(t + 1) >= result.valid.size() || result.valid[std::size_t(t + 1)]);
}
} // namespace

bool hasKnnReadout(const ForwardResult& result) {
    return result.knnStore && result.variant.knn && result.internals.count("knn_distances") &&
           result.internals.count("p_lm");
}

KnnMixture remixKnn(const ForwardResult& result, double lambda) {
    const variants::KnnLm& knn = *result.variant.knn;
    KnnMixture mixture;
    mixture.lambda = lambda < 0.0 ? double(knn.lambda) : lambda;
    const Tensor& distances = internal(result, "knn_distances");
    const Tensor& next = internal(result, "knn_next_token");
    const Tensor& targets = internal(result, "knn_target");
    const Tensor& pLm = internal(result, "p_lm");
    const int64_t k = distances.dim(1);
    for (int t = 0; t < int(distances.dim(0)); ++t) {
        KnnPositionReadout r;
        r.target = int32_t(valueAt(targets, t));
        r.scored = hasNextToken(result, t);
        const std::vector<double> weights = variants::neighbourWeights(
            distances.values().subspan(std::size_t(t * k), std::size_t(k)), knn.temperature);
        for (int64_t i = 0; i < k; ++i)
            if (int32_t(valueAt(next, t * k + i)) == r.target) r.pKnn += weights[std::size_t(i)];
        r.pLm = double(valueAt(pLm, t));
        r.pMix = mixture.lambda * r.pKnn + (1.0 - mixture.lambda) * r.pLm;
        if (r.scored) {
            ++mixture.scored;
            mixture.lmLoss -= std::log(r.pLm);
            mixture.mixLoss -= std::log(r.pMix);
        }
        mixture.positions.push_back(r);
    }
    if (mixture.scored > 0) {
        mixture.lmLoss /= mixture.scored;
        mixture.mixLoss /= mixture.scored;
    }
    return mixture;
}

std::vector<KnnNeighbour> knnNeighbours(const ForwardResult& result, int position) {
    const Tensor& rows = internal(result, "knn_neighbors");
    const Tensor& distances = internal(result, "knn_distances");
    const Tensor& next = internal(result, "knn_next_token");
    const int64_t k = rows.dim(1), first = int64_t(position) * k;
    const std::vector<double> weights =
        variants::neighbourWeights(distances.values().subspan(std::size_t(first), std::size_t(k)),
                                   result.variant.knn->temperature);
    std::vector<KnnNeighbour> neighbours;
    for (int64_t i = 0; i < k; ++i)
        neighbours.push_back({int(i), int64_t(valueAt(rows, first + i)),
                              valueAt(distances, first + i), weights[std::size_t(i)],
                              int32_t(valueAt(next, first + i))});
    return neighbours;
}

KnnContext knnContext(const KnnStore& store, int64_t row, int before, int after) {
    KnnContext context;
    const int64_t first = std::max<int64_t>(0, row - before + 1);
    const int64_t last = std::min(store.tokenCount(), row + 2 + after);
    for (int64_t i = first; i <= row; ++i)
        context.before << store.label(i);
    context.next = store.label(row + 1);
    for (int64_t i = row + 2; i < last; ++i)
        context.after << store.label(i);
    // Why from the offsets: a label drops the white space a token begins with.
    const auto& at = store.offsets;
    const auto [nextBegin, nextEnd] = at[std::size_t(row + 1)];
    context.text = store.text(at[std::size_t(first)].first, nextBegin) + '[' +
                   store.text(nextBegin, nextEnd) + ']' +
                   store.text(nextEnd, at[std::size_t(last - 1)].second);
    return context;
}

int mostChangedPosition(const KnnMixture& mixture) {
    int best = -1;
    double largest = -1.0;
    for (int t = 0; t < int(mixture.positions.size()); ++t) {
        const KnnPositionReadout& r = mixture.positions[std::size_t(t)];
        const double change = std::abs(std::log(r.pMix) - std::log(r.pLm));
        if (r.scored && change > largest) {
            largest = change;
            best = t;
        }
    }
    return best < 0 ? int(mixture.positions.size()) - 1 : best;
}
} // namespace headlight::app
