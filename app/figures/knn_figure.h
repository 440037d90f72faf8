#pragma once
// The kNN-LM view (variants/knn_lm.h, catalogue item 18): for one position, the neighbours the
// datastore returned with the text around each (the stored next token highlighted) and their
// distances, and the scored token's p_LM, p_kNN and p_mix as bars; for every position, the three
// probabilities and what the mixture gains over the LM in nats (ln p_mix − ln p_LM). The mixture is
// re-mixed at the view's λ (ViewState::knnLambda) from the pass's stored numbers
// (app/session/knn_readout.h), so moving the window's λ slider runs no model.

#include "export/figure_data.h"
#include "figure_builders.h"
#include "figures/panels.h"

namespace headlight::app {

render::PanelsFigure knnNeighboursFigure(const ForwardResult& result, const ViewState& state);

// Tokens of datastore text shown before a neighbour's stored next token, and after it.
constexpr int kKnnContextBefore = 12, kKnnContextAfter = 3;

// The view's numbers as `headlight export --view knn-neighbours --out F.csv` writes them: one row
// per position and neighbour (position, token, target, rank, distance, weight, datastore
// position, stored next token, context text, p_lm, p_knn, p_mix at `lambda`; a negative λ is the
// pass's own).
render::DataTable knnNeighbourTable(const ForwardResult& result, double lambda);
} // namespace headlight::app
