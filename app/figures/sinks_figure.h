#pragma once
// The sinks view (docs/sinks.md): per layer the largest residual-stream activations against the
// median (Sun et al. 2024's massive activations), every head's share of attention on the first
// token, and what zeroing the massive activations, dropping the first token or switching the
// attention rule does to the output and to those shares (analysis/attention_sinks.h).

#include "figure_builders.h"
#include "figures/panels.h"

namespace headlight::app {

render::PanelsFigure sinksFigure(const ForwardResult& result, const ViewState& state);
} // namespace headlight::app
