#pragma once
// Every score a checkpoint's weights give its heads (analysis/head_circuits.h): each head's
// copying score and the Q-, K- and V-composition between heads of different layers, with the
// strongest pairs and the layer-pair maxima that `headlight heads --circuits` prints and the
// window's Circuits view draws.

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace headlight::analysis {

struct CircuitScores {
    int layers = 0, heads = 0;
    std::vector<double> copying; // per head, layer-major; empty with copyingAbsence set
    std::string copyingAbsence;
    std::array<std::vector<double>, 3> composition; // Q, K, V: [L·H, L·H] row-major
};

// The composition kinds in CircuitScores::composition's order, as the JSON and the figure name
// them.
constexpr std::array<const char*, 3> kCompositionKeys{"q", "k", "v"};
constexpr std::array<const char*, 3> kCompositionNames{"Q", "K", "V"};
constexpr int kStrongestPairs = 5;

// Reads the checkpoint folder's weights again (mapped, widened per layer). Throws
// std::invalid_argument with a one-line reason where a layer has no per-head attention maps.
// `afterPair(done, total)` is called after each layer pair of the three kinds; what it throws
// stops the work (a window's pass cancelled).
CircuitScores scoreCircuits(const std::string& folder,
                            const std::function<void(int done, int total)>& afterPair = {});

// Per head (layer-major index) its copying score, or nothing when the model has none.
std::optional<double> copyingOf(const CircuitScores& scores, std::size_t head);

struct CompositionPair {
    int kind, fromLayer, fromHead, toLayer, toHead;
    double score;
};
// The `count` largest scores of one kind (0 Q, 1 K, 2 V) over pairs of a head and a head of a
// later layer, largest first.
std::vector<CompositionPair> strongestPairs(const CircuitScores& scores, int kind,
                                            int count = kStrongestPairs);
// The largest score of one kind over the head pairs of layers (from, to), to > from.
double layerPairMaximum(const CircuitScores& scores, int kind, int from, int to);
} // namespace headlight::analysis
