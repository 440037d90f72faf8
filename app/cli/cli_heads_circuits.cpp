#include "cli_heads_circuits.h"

#include "analysis/head_circuits.h"
#include "cli_args.h"
#include "io/checkpoint.h"
#include "model/checkpoint_layout.h"
#include "model/model_spec.h"

#include <QJsonArray>
#include <algorithm>
#include <stdexcept>

namespace headlight::app {
namespace {

constexpr std::array<const char*, 3> kKindKeys{"q", "k", "v"};
constexpr std::array<const char*, 3> kKindNames{"Q", "K", "V"};
constexpr std::array<analysis::CompositionKind, 3> kKinds{analysis::CompositionKind::Query,
                                                          analysis::CompositionKind::Key,
                                                          analysis::CompositionKind::Value};
constexpr int kStrongestPairs = 5;

struct Pair {
    int kind, fromLayer, fromHead, toLayer, toHead;
    double score;
};

// The kStrongestPairs largest scores of one kind, largest first.
std::vector<Pair> strongest(const CircuitScores& s, int kind) {
    const auto total = std::size_t(s.layers) * std::size_t(s.heads);
    std::vector<Pair> pairs;
    for (std::size_t from = 0; from < total; ++from)
        for (std::size_t to = 0; to < total; ++to) {
            const int fromLayer = int(from) / s.heads, toLayer = int(to) / s.heads;
            if (toLayer <= fromLayer) continue;
            pairs.push_back({kind, fromLayer, int(from) % s.heads, toLayer, int(to) % s.heads,
                             s.composition[std::size_t(kind)][from * total + to]});
        }
    const auto keep = std::min<std::size_t>(kStrongestPairs, pairs.size());
    std::partial_sort(pairs.begin(), pairs.begin() + std::ptrdiff_t(keep), pairs.end(),
                      [](const Pair& a, const Pair& b) { return a.score > b.score; });
    pairs.resize(keep);
    return pairs;
}

// The largest score over the head pairs of layers (from, to), to > from.
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

QString headName(int layer, int head) {
    return QStringLiteral("L%1H%2").arg(layer).arg(head);
}
} // namespace

CircuitScores scoreCircuits(const std::string& folder) {
    const ModelSpec spec = loadModelConfig(folder);
    const io::Checkpoint checkpoint(folder);
    analysis::HeadCircuits circuits;
    try {
        circuits = analysis::readHeadCircuits(readWeights(checkpoint, spec), spec);
    } catch (const std::invalid_argument& error) {
        throw CliError(std::string("--circuits: ") + error.what());
    }
    CircuitScores scores;
    scores.layers = circuits.layers;
    scores.heads = circuits.heads;
    scores.copying = analysis::copyingScores(circuits);
    scores.copyingAbsence = circuits.copyingAbsence;
    for (std::size_t k = 0; k < kKinds.size(); ++k)
        scores.composition[k] = analysis::compositionScores(circuits, kKinds[k]);
    return scores;
}

std::optional<double> copyingOf(const CircuitScores& scores, std::size_t head) {
    if (head >= scores.copying.size()) return std::nullopt;
    return scores.copying[head];
}

QJsonObject circuitsJson(const CircuitScores& s) {
    QJsonObject composition;
    const auto total = std::size_t(s.layers) * std::size_t(s.heads);
    for (std::size_t k = 0; k < kKinds.size(); ++k) {
        QJsonArray fromLayers;
        for (int l1 = 0; l1 < s.layers; ++l1) {
            QJsonArray fromHeads;
            for (int h1 = 0; h1 < s.heads; ++h1) {
                QJsonArray toLayers;
                for (int l2 = 0; l2 < s.layers; ++l2) {
                    QJsonArray toHeads;
                    for (int h2 = 0; h2 < s.heads; ++h2)
                        toHeads.append(s.composition[k][(std::size_t(l1) * s.heads + h1) * total +
                                                        std::size_t(l2) * s.heads + h2]);
                    toLayers.append(toHeads);
                }
                fromHeads.append(toLayers);
            }
            fromLayers.append(fromHeads);
        }
        composition[kKindKeys[k]] = fromLayers;
    }
    QJsonArray pairs;
    for (int k = 0; k < int(kKinds.size()); ++k)
        for (const Pair& p : strongest(s, k))
            pairs.append(
                QJsonObject{{"kind", kKindNames[std::size_t(k)]},
                            {"from", QJsonObject{{"layer", p.fromLayer}, {"head", p.fromHead}}},
                            {"to", QJsonObject{{"layer", p.toLayer}, {"head", p.toHead}}},
                            {"score", p.score}});
    QJsonObject json{{"composition", composition}, {"strongest", pairs}};
    if (!s.copyingAbsence.empty())
        json["copying_absence"] = QString::fromStdString(s.copyingAbsence);
    return json;
}

void printCircuits(QTextStream& out, const CircuitScores& s) {
    if (!s.copyingAbsence.empty())
        out << "copying: not scored, " << QString::fromStdString(s.copyingAbsence) << "\n";
    if (s.layers < 2) {
        out << "composition: needs two layers or more\n";
        return;
    }
    for (int k = 0; k < int(kKinds.size()); ++k) {
        out << "\n"
            << kKindNames[std::size_t(k)]
            << "-composition (an earlier head's OV into a later head's "
            << (k == 0   ? "queries"
                : k == 1 ? "keys"
                         : "values")
            << "), strongest pairs:\n";
        for (const Pair& p : strongest(s, k))
            out << "  " << headName(p.fromLayer, p.fromHead).leftJustified(8) << "-> "
                << headName(p.toLayer, p.toHead).leftJustified(8)
                << QString::number(p.score, 'f', 3) << "\n";
        out << "  largest per layer pair (row: earlier layer, column: later layer):\n";
        out << "       ";
        for (int to = 1; to < s.layers; ++to)
            out << QString::number(to).rightJustified(7);
        out << "\n";
        for (int from = 0; from + 1 < s.layers; ++from) {
            out << QString::number(from).rightJustified(7);
            for (int to = 1; to < s.layers; ++to)
                out << (to > from ? QString::number(layerPairMaximum(s, k, from, to), 'f', 3)
                                        .rightJustified(7)
                                  : QStringLiteral("      ."));
            out << "\n";
        }
    }
}
} // namespace headlight::app
