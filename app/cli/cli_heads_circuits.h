#pragma once
// `headlight heads --circuits`: the scores read from a checkpoint's weights alone
// (analysis/head_circuits.h): each head's copying score and the Q-, K- and V-composition between
// heads of different layers, as JSON and as text.

#include <QJsonObject>
#include <QTextStream>
#include <array>
#include <optional>
#include <string>
#include <vector>

namespace headlight::app {

struct CircuitScores {
    int layers = 0, heads = 0;
    std::vector<double> copying; // per head, layer-major; empty with copyingAbsence set
    std::string copyingAbsence;
    std::array<std::vector<double>, 3> composition; // Q, K, V: [L·H, L·H] row-major
};

// Reads the checkpoint folder's weights again (mapped, widened per layer); throws CliError with a
// one-line reason where a layer has no per-head attention maps.
CircuitScores scoreCircuits(const std::string& folder);

// Per head (layer-major index) its copying score, or nothing when the model has none.
std::optional<double> copyingOf(const CircuitScores& scores, std::size_t head);

// {"copying_absence"?, "composition": {"q"|"k"|"v": [L][H][L][H]}, "strongest": [...]}
QJsonObject circuitsJson(const CircuitScores& scores);
// The strongest pairs of each kind and each kind's layer-pair maximum.
void printCircuits(QTextStream& out, const CircuitScores& scores);
} // namespace headlight::app
