#pragma once
// What `--checkpoints SOURCE` (and the window) name as a training series: a zoo run folder (with
// run.json), the name of a run shipped in resources/runs/, or a Hugging Face cache repository
// (an ORG/NAME id or its folder) whose revisions are the checkpoints (io/checkpoint_series.h).

#include "io/checkpoint_series.h"

#include <QString>
#include <optional>

namespace headlight::app {

// Throws io::CheckpointError with one line saying what SOURCE is not.
io::CheckpointSeries openCheckpointSeries(const QString& source);

// The series a model folder is a checkpoint of, and its index there: the run whose run.json (in
// the folder above) lists it, or the cached repository it is a snapshot of when that holds two or
// more revisions. Nothing otherwise, nor when the run.json cannot be read.
struct SeriesPosition {
    io::CheckpointSeries series;
    int index = 0;
};
std::optional<SeriesPosition> seriesOfFolder(const QString& folder);

// The index of `folder` among the series' checkpoints (paths compared canonically); -1 if none.
int checkpointIndex(const io::CheckpointSeries& series, const QString& folder);
} // namespace headlight::app
