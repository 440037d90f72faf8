#pragma once
// The LM-head views: the logit lens (the top next token per layer and position, coloured by its
// probability, beside the rank of the final prediction and the entropy) and the variant's effect
// on the output against exact attention (KL per position, per-head JSD of the attention rows,
// the hidden state's relative change per layer, and the tokens whose prediction changed).

#include "figure_builders.h"
#include "figures/panels.h"

namespace headlight::app {

render::PanelsFigure logitLensFigure(const ForwardResult& result, const ViewState& state);
render::PanelsFigure variantEffectFigure(const ForwardResult& result, const ViewState& state);

// "embeddings", "layer 1", ...: the hidden state a lens row reads.
QString lensRowLabel(int row);
} // namespace headlight::app
