#pragma once
// The head-roles view: every head of every layer scored for the roles of docs/head-roles.md
// (previous-token, duplicate-token and induction as TransformerLens's detect_head scores them,
// the best fixed offset, the first-token sink), one layer × head grid per role with each head's
// score in its cell. It scores the open text, or the generated probes of `headlight heads` when
// the window's head table has scored them (ViewState::probeRoles). It follows the pass, so
// toggling a variant re-scores every head at once: which variants keep an induction head?

#include "figure_builders.h"
#include "figures/panels.h"

namespace headlight::app {

// What the view and the window's head table show: the scores, or why there are none.
struct HeadRoleScoring {
    int layers = 0, heads = 0;
    std::vector<analysis::HeadRoleScores> scores; // layer-major; empty: `why` says why
    QString why;
    // The probes when scored on them (the scores' source), else none: the text.
    std::optional<analysis::GeneratedProbeSet> probes;
    QString source; // "this text (12 tokens, 6 repeated)" or the probe set's phrase
};

// The probe scores of `state` when it has some for this model's shape, else the text's.
HeadRoleScoring headRoleScoring(const ForwardResult& result, const ViewState& state);

render::PanelsFigure headRolesFigure(const ForwardResult& result, const ViewState& state);
} // namespace headlight::app
