#pragma once
// The circuits view: what the weights alone say about the heads (docs/head-roles.md,
// "Circuits"): for each of Q-, K- and V-composition a matrix of layer pairs (earlier layer by
// later layer, each cell the largest score over their heads), the strongest head pairs of each
// kind, and every head's copying score, as `headlight heads --circuits` prints them. It does
// not depend on the text or the variant: the scores are the model's (PassExtras::circuits).

#include "figure_builders.h"
#include "figures/panels.h"

namespace headlight::app {

render::PanelsFigure circuitsFigure(const ForwardResult& result, const ViewState& state);
} // namespace headlight::app
