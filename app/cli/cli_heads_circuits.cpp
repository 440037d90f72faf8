#include "cli_heads_circuits.h"

#include "cli_args.h"

#include <QJsonArray>
#include <stdexcept>

namespace headlight::app {
namespace {

using analysis::kCompositionKeys;
using analysis::kCompositionNames;

QString headName(int layer, int head) {
    return QStringLiteral("L%1H%2").arg(layer).arg(head);
}
} // namespace

CircuitScores scoreCircuits(const std::string& folder) {
    try {
        return analysis::scoreCircuits(folder);
    } catch (const std::invalid_argument& error) {
        throw CliError(std::string("--circuits: ") + error.what());
    }
}

QJsonObject circuitsJson(const CircuitScores& s) {
    QJsonObject composition;
    const auto total = std::size_t(s.layers) * std::size_t(s.heads);
    for (std::size_t k = 0; k < kCompositionKeys.size(); ++k) {
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
        composition[kCompositionKeys[k]] = fromLayers;
    }
    QJsonArray pairs;
    for (int k = 0; k < int(kCompositionKeys.size()); ++k)
        for (const analysis::CompositionPair& p : analysis::strongestPairs(s, k))
            pairs.append(
                QJsonObject{{"kind", kCompositionNames[std::size_t(k)]},
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
    for (int k = 0; k < int(kCompositionKeys.size()); ++k) {
        out << "\n"
            << kCompositionNames[std::size_t(k)]
            << "-composition (an earlier head's OV into a later head's "
            << (k == 0   ? "queries"
                : k == 1 ? "keys"
                         : "values")
            << "), strongest pairs:\n";
        for (const analysis::CompositionPair& p : analysis::strongestPairs(s, k))
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
                out << (to > from
                            ? QString::number(analysis::layerPairMaximum(s, k, from, to), 'f', 3)
                                  .rightJustified(7)
                            : QStringLiteral("      ."));
            out << "\n";
        }
    }
}
} // namespace headlight::app
