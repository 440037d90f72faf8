#pragma once
// A series of checkpoints of one model over its training, for the training scrubber
// (docs/scrubber.md). Two sources:
//   - a zoo training run: <run>/run.json names each checkpoint's step, folder and held-out loss,
//     and each <run>/step_NNNNNN/ is a complete zoo model folder (docs/zoo-format.md);
//   - the revisions of one Hugging Face cache repository (io/hub_cache.h): Pythia's step0,
//     step1, … branches, in training-step order.
// Each checkpoint's folder is opened by the ordinary checkpoint readers.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace headlight::io {

struct SeriesCheckpoint {
    std::string label;                 // "step 1000" for a run, the revision's name for the Hub
    std::optional<int64_t> step;       // the training step, when known
    std::string folder;                // the model folder to open
    std::optional<double> heldOutLoss; // run.json's "loss" at that step
};

struct CheckpointSeries {
    std::string name;        // the run's name, or the repository id
    std::string description; // the run's, else empty
    std::string text;        // the run's default text, else empty
    std::string source;      // the run folder, or the repository's cache folder
    std::vector<SeriesCheckpoint> checkpoints;
};

constexpr const char* kRunFileName = "run.json";
constexpr const char* kRunFormat = "headlight-run";

bool isRunFolder(const std::string& folder); // holds a run.json

// Throws CheckpointError with one line naming run.json and the key: a file that is not a
// headlight-run, no checkpoints, steps that do not increase, a folder that is missing or that
// leaves the run folder.
CheckpointSeries readRunFolder(const std::string& folder);

// The revisions of the cached repository `pathOrId` names (cachedRepoFolder): those whose names
// give a training step, in step order, one per commit; all of them by name when none does.
// Throws CheckpointError when the repository holds fewer than two.
CheckpointSeries hubRevisionSeries(const std::string& pathOrId);
} // namespace headlight::io
