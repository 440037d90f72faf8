#pragma once
// The Features view (docs/features.md, "In the window"): an attached sparse autoencoder read on
// the pass (session/feature_analysis.h).
//   without a feature chosen  the features strongest on the text as a feature × token heatmap
//                             (click a row for its page), each token's top features and L0 in a
//                             table, the reconstruction quality and losses in the caption
//   with feature f chosen     its page: its activation along the text, a histogram of it over
//                             the text's tokens, and the tokens its decoder row promotes and
//                             suppresses through the unembedding (W_dec[f]·W_U, top and bottom 10)

#include "figure_builders.h"
#include "figures/panels.h"

#include <vector>

namespace headlight::app {

render::PanelsFigure featuresFigure(const ForwardResult& result, const ViewState& state);

// The features the overview's heatmap shows, top row first: those with the largest activation
// on the text, at most kFeatureRows. A click on row i opens the page of element i.
std::vector<int> featuresShown(const FeatureAnalysis& analysis);
constexpr int kFeatureRows = 12;
} // namespace headlight::app
