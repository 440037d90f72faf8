#include "analysis/circuit_scores.h"

#include "analysis/head_circuits.h"
#include "io/checkpoint.h"
#include "model/checkpoint_layout.h"
#include "model/model_spec.h"

#include <algorithm>

namespace headlight::analysis {

CircuitScores scoreCircuits(const std::string& folder,
                            const std::function<void(int, int)>& afterPair) {
    const ModelSpec spec = loadModelConfig(folder);
    const io::Checkpoint checkpoint(folder);
    const HeadCircuits circuits = readHeadCircuits(readWeights(checkpoint, spec), spec);
    constexpr std::array<CompositionKind, 3> kinds{CompositionKind::Query, CompositionKind::Key,
                                                   CompositionKind::Value};
    CircuitScores scores;
    scores.layers = circuits.layers;
    scores.heads = circuits.heads;
    scores.copying = copyingScores(circuits);
    scores.copyingAbsence = circuits.copyingAbsence;
    for (std::size_t k = 0; k < kinds.size(); ++k)
        scores.composition[k] = compositionScores(circuits, kinds[k], [&](int done, int pairs) {
            if (afterPair) afterPair(int(k) * pairs + done, int(kinds.size()) * pairs);
        });
    return scores;
}

std::optional<double> copyingOf(const CircuitScores& scores, std::size_t head) {
    if (head >= scores.copying.size()) return std::nullopt;
    return scores.copying[head];
}

std::vector<CompositionPair> strongestPairs(const CircuitScores& s, int kind, int count) {
    const auto total = std::size_t(s.layers) * std::size_t(s.heads);
    std::vector<CompositionPair> pairs;
    for (std::size_t from = 0; from < total; ++from)
        for (std::size_t to = 0; to < total; ++to) {
            const int fromLayer = int(from) / s.heads, toLayer = int(to) / s.heads;
            if (toLayer <= fromLayer) continue;
            pairs.push_back({kind, fromLayer, int(from) % s.heads, toLayer, int(to) % s.heads,
                             s.composition[std::size_t(kind)][from * total + to]});
        }
    const auto keep = std::min(std::size_t(std::max(count, 0)), pairs.size());
    std::partial_sort(
        pairs.begin(), pairs.begin() + std::ptrdiff_t(keep), pairs.end(),
        [](const CompositionPair& a, const CompositionPair& b) { return a.score > b.score; });
    pairs.resize(keep);
    return pairs;
}

double layerPairMaximum(const CircuitScores& s, int kind, int from, int to) {
    const auto total = std::size_t(s.layers) * std::size_t(s.heads);
    double best = 0.0;
    for (int h1 = 0; h1 < s.heads; ++h1)
        for (int h2 = 0; h2 < s.heads; ++h2)
            best = std::max(
                best, s.composition[std::size_t(kind)][(std::size_t(from) * s.heads + h1) * total +
                                                       std::size_t(to) * s.heads + h2]);
    return best;
}
} // namespace headlight::analysis
