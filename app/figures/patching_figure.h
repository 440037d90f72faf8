#pragma once
// The activation-patching heatmap: layers as rows, the text's tokens (layers × positions) or the
// heads (layers × heads) as columns, each cell the share of the clean logit difference its patch
// recovers, on a diverging scale centred on 0 (1: the clean run's behaviour, 0: the corrupted
// run's, below 0: the patch pushes further away).

#include "activation_patching.h"
#include "figures/heatmap.h"

#include <QStringList>

namespace headlight::app {

// `tokens` labels the position columns (the corrupted text's tokens); `target` and `foil` name
// the two tokens of the difference in the title.
render::HeatmapFigure patchingFigure(const PatchResult& result, const QStringList& tokens,
                                     const QString& target, const QString& foil);
// The result as CSV: layer,position|head,recovered,logit_difference, one line per cell.
QString patchingCsv(const PatchResult& result);
} // namespace headlight::app
