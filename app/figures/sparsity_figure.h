#pragma once
// The sparsity view: what a variant's mask or approximate kernel lets through. For one layer it
// shows the nominal mask beside the effective attention of the selected head, the density of
// every head, and the attention mass of the vanilla pass that the variant drops.
//
// "Allowed" is the mask the softmax obeyed when the variant has one; with the exact softmax and
// no mask, every key (every earlier key in a causal model); with an approximate kernel, the
// query–key pairs its effective attention reaches (|weight| > kAttendedWeight).

#include "figure_builders.h"
#include "figures/panels.h"

#include <vector>

namespace headlight::app {

constexpr float kAttendedWeight = 1e-6f;

struct SparsityNumbers {
    std::vector<float> density;     // [H] share of valid query–key pairs allowed
    std::vector<float> massOutside; // [H] vanilla mass outside them, mean over valid queries;
                                    // empty when the result has no vanilla pass
};

// Layer `layer` of `result` -> one number of each kind per head.
SparsityNumbers sparsityNumbers(const ForwardResult& result, int layer);

render::PanelsFigure sparsityFigure(const ForwardResult& result, const ViewState& state);
} // namespace headlight::app
