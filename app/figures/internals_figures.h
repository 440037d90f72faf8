#pragma once
// Views of a variant's own internals, shown when the pass has them (else the figure says which
// option to toggle): the early-exit layer of every token with the exit signal per layer, and the
// Reformer LSH bucket of every token per head, in text order and in the sorted order LSH attends
// in.

#include "figure_builders.h"
#include "figures/panels.h"

namespace headlight::app {

// A pass-wide or per-layer internal by name, or nullptr when the pass has none.
const Tensor* internalOf(const std::map<std::string, Tensor>& internals, const char* name);
// The internals of layer `layer`; empty past the last layer.
const std::map<std::string, Tensor>& layerInternalsOf(const ForwardResult& result, int layer);

render::PanelsFigure earlyExitFigure(const ForwardResult& result, const ViewState& state);
render::PanelsFigure lshFigure(const ForwardResult& result, const ViewState& state);
} // namespace headlight::app
