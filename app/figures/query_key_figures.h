#pragma once
// The query-key embedding views (after AttentionViz, Yeh et al. 2023; the projection is
// core/analysis/query_key_embedding.h): the selected head's queries and keys in one plane,
// coloured by position and by token kind, beside the layer's heads as small scatters; and an
// overview of every layer × head.

#include "figure_builders.h"
#include "figures/panels.h"

namespace headlight::app {

render::PanelsFigure queryKeyFigure(const ForwardResult& result, const ViewState& state);
render::PanelsFigure queryKeyGridFigure(const ForwardResult& result, const ViewState& state);

// "Query “cat” (#3) · PC1 0.41, PC2 −1.20": a scatter point's hover read-out.
QString scatterReadout(const render::ScatterFigure& figure, const render::ScatterPoint& point);
} // namespace headlight::app
