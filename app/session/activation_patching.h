#pragma once
// Activation patching (Vig et al. 2020; Meng et al. 2022; Wang et al. 2023): run a clean and a
// corrupted text of the same token length, then rerun the corrupted one with one activation
// taken from the clean run, one pass per cell:
//
//   layers × positions  the residual stream entering layer l at position p
//   layers × heads      head h's output of layer l at every position
//
// and report how much of the clean behaviour each patch recovers, on the logit difference at the
// last position LD = logit[target] − logit[foil]:
//
//   recovered = (LD_patched − LD_corrupt) / (LD_clean − LD_corrupt)
//
// 1 is the clean run's difference, 0 the corrupted run's. Passes read the tied LM head.

#include "model/transformer.h"

#include <QString>
#include <functional>
#include <optional>
#include <vector>

namespace headlight::app {

enum class PatchGrid { LayersByPositions, LayersByHeads };

// "layers×positions" / "layers×heads" (an ASCII x is taken too).
std::optional<PatchGrid> patchGridFromName(const QString& name);

struct PatchSetup {
    ModelInput clean, corrupt;
    int target = 0;          // the token whose logit the difference rewards
    std::optional<int> foil; // the token it is measured against; unset: the corrupted run's top
    PatchGrid grid = PatchGrid::LayersByPositions;
    variants::VariantSpec variant;
};

struct PatchResult {
    PatchGrid grid = PatchGrid::LayersByPositions;
    int rows = 0, cols = 0;         // layers × (positions or heads)
    std::vector<double> recovered;  // [rows · cols], row-major
    std::vector<double> difference; // [rows · cols] LD of each patched pass
    double cleanDifference = 0.0, corruptDifference = 0.0;
    int target = 0, foil = 0;
};

// Called after each pass with (done, total); returning false cancels.
using PatchProgress = std::function<bool(int done, int total)>;

// Throws ModelError (texts of different lengths, no LM head, a target or foil outside the
// vocabulary, the same difference clean and corrupted) or variants::VariantError; returns nothing
// when cancelled.
std::optional<PatchResult> runPatching(const TransformerModel& model, const PatchSetup& setup,
                                       const PatchProgress& progress);
} // namespace headlight::app
