#pragma once
// Views of how a zoo model spends its computation per token: mixture-of-experts routing (which
// experts each token goes to, with what gate weight, and the load of every expert per layer) and
// Universal Transformer ACT pondering (the halting probability of each token at each step and
// the ponder count N + R). Each says which kind of model has the internals when the pass has none.

#include "figure_builders.h"
#include "figures/panels.h"

namespace headlight::app {

render::PanelsFigure moeRoutingFigure(const ForwardResult& result, const ViewState& state);
render::PanelsFigure actPonderFigure(const ForwardResult& result, const ViewState& state);
} // namespace headlight::app
