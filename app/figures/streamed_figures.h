#pragma once
// The views of a long pass, whose attention is kept as queries and keys (ForwardResult::streamed,
// app/session/streamed_pass.h) instead of [L, H, T, T] maps: which maps a view needs built
// before it draws (the window builds them off the GUI thread), and what the views that would
// need every map draw instead.

#include "figure_builders.h"

#include <optional>

namespace headlight::app {

// Whether `kind` can be drawn from `result` without building a map or rollout first: always for
// a pass with full maps.
bool streamedViewReady(ViewKind kind, const ForwardResult& result, const ViewState& state);
// Builds (and keeps in result.streamed) what `kind` needs for `state`: for a worker thread.
void buildStreamedView(ViewKind kind, const ForwardResult& result, const ViewState& state);
// What the view shows while that runs, one line.
QString streamedWaitNote(ViewKind kind, const ForwardResult& result, const ViewState& state);

// For a streamed pass, the one line a view that needs every map (all heads, head × head JSD,
// sparsity) shows instead, saying why and where to look; nothing for the other views.
std::optional<QString> streamedRefusal(ViewKind kind, const ForwardResult& result);

// The Rollout view of a streamed pass: the whole rollout up to analysis::kFullRolloutTokens,
// past it the selected query's row (or a line asking for a query).
render::Figure streamedRolloutFigure(const ForwardResult& result, const ViewState& state);
} // namespace headlight::app
