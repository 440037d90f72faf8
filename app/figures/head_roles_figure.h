#pragma once
// The head-roles view: every head of every layer scored on the open text for the roles of
// docs/head-roles.md (previous-token, duplicate-token and induction as TransformerLens's
// detect_head scores a text, the best fixed offset, the first-token sink), one layer × head grid
// per role with each head's score in its cell. It follows the pass, so toggling a variant
// re-scores every head at once: which variants keep an induction head?

#include "figure_builders.h"
#include "figures/panels.h"

namespace headlight::app {

render::PanelsFigure headRolesFigure(const ForwardResult& result, const ViewState& state);
} // namespace headlight::app
