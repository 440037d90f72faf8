#pragma once
// `headlight heads --circuits`: the scores read from a checkpoint's weights alone
// (analysis/head_circuits.h): each head's copying score and the Q-, K- and V-composition between
// heads of different layers, as JSON and as text.

#include "analysis/circuit_scores.h"

#include <QJsonObject>
#include <QTextStream>
#include <string>

namespace headlight::app {

using analysis::CircuitScores;
using analysis::copyingOf;

// analysis::scoreCircuits, its refusal a CliError naming --circuits.
CircuitScores scoreCircuits(const std::string& folder);

// {"copying_absence"?, "composition": {"q"|"k"|"v": [L][H][L][H]}, "strongest": [...]}
QJsonObject circuitsJson(const CircuitScores& scores);
// The strongest pairs of each kind and each kind's layer-pair maximum.
void printCircuits(QTextStream& out, const CircuitScores& scores);
} // namespace headlight::app
