#pragma once
// The training scrubber's lines (docs/scrubber.md): over the checkpoints of a series, the loss of
// the text (and the run's held-out loss), the in-context-learning score, and the role scores of
// the strongest previous-token, duplicate-token and induction heads, with a marker at the
// checkpoint shown. The window's Training view and `headlight export --checkpoints --view
// training` draw it; its table is the CSV export.

#include "checkpoint_metrics.h"
#include "export/figure_data.h"
#include "figures/panels.h"
#include "io/checkpoint_series.h"

#include <vector>

namespace headlight::app {

struct TrainingCurves {
    io::CheckpointSeries series;
    QString text;
    std::vector<CheckpointMetrics> metrics; // one per checkpoint of `series`, in its order
};

// `marker`: the checkpoint index the marker stands at, -1 for none.
render::PanelsFigure trainingFigure(const TrainingCurves& curves, int marker);

// One row per checkpoint: index, label, step, loss, held-out loss, ICL score, then each role's
// strongest head's score (the header names the head: "induction L1 H2").
render::DataTable trainingTable(const TrainingCurves& curves);
} // namespace headlight::app
