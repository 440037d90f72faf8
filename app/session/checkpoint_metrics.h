#pragma once
// What the training scrubber measures at each checkpoint of a series (docs/scrubber.md): every
// head's role scores on the generated probes (as `headlight heads` scores them with its defaults),
// and the loss and in-context-learning score of one text (analysis/training_metrics.h).

#include "analysis/head_roles.h"
#include "analysis/training_metrics.h"
#include "io/checkpoint_series.h"
#include "model_session.h"

#include <QString>
#include <atomic>
#include <functional>
#include <vector>

namespace headlight::app {

// The probes: `headlight heads`'s defaults (seed 0, 8 probes of 20 random tokens repeated once),
// the length shortened to fit a context of fewer than 41 positions.
struct ScrubProbes {
    int seed = 0;
    int count = 8;
    int length = 20;
};

struct CheckpointMetrics {
    int layers = 0, heads = 0;
    std::vector<analysis::HeadRoleScores> roles; // layer-major
    int tokens = 0;                              // of the text
    double loss = 0.0;                           // mean nats per predicted token of the text
    analysis::IclPositions icl;
    double iclScore = 0.0; // loss at icl.late minus loss at icl.early (nats)
    int probeLength = 0;   // the random tokens per probe, before the repeat
};

// Throws std::exception with one line: a model that is not a causal language model, a text of
// fewer than 3 tokens, or what scoring the probes refuses.
CheckpointMetrics measureCheckpoint(const LoadedModel& model, const QString& text,
                                    const ScrubProbes& probes = {});

// Reports each checkpoint as it is measured (done of total); false stops the series there.
using SeriesProgress = std::function<bool(int done, int total, const QString& label)>;

// Every checkpoint of `series` loaded in turn (with the backend `choice` names) and measured;
// fewer entries than checkpoints when `progress` stopped it. Throws std::exception naming the
// checkpoint that failed.
std::vector<CheckpointMetrics> measureSeries(const io::CheckpointSeries& series,
                                             const QString& text, const BackendChoice& choice,
                                             const SeriesProgress& progress);

// The head with the largest score of a role at any checkpoint (layer-major index), and the
// role's score of that head at each checkpoint.
struct RoleLine {
    int head = 0; // layer * heads + head
    std::vector<double> scores;
};
RoleLine strongestHeadLine(const std::vector<CheckpointMetrics>& metrics,
                           double analysis::HeadRoleScores::*role);
} // namespace headlight::app
