#pragma once
// Views of a variant's own internals, shown when the pass has them (else the figure says which
// option to toggle): the early-exit layer of every token with the exit signal per layer, and the
// Reformer LSH bucket of every token per head, in text order and in the sorted order LSH attends
// in.

#include "figure_builders.h"
#include "figures/panels.h"

namespace headlight::app {

render::PanelsFigure earlyExitFigure(const ForwardResult& result, const ViewState& state);
render::PanelsFigure lshFigure(const ForwardResult& result, const ViewState& state);
} // namespace headlight::app
