#pragma once
// Every head's role scores over a generated probe set (docs/head-roles.md, "Probes"): what the
// head-roles view and the window's head table show when they are scored on probes instead of the
// text. The ids and the scores are those of `headlight heads --seed --probes --length` (the same
// analysis::generatedProbes and analysis::scoreProbeRoles), with the variant of the pass.

#include "analysis/head_role_probes.h"

#include <QString>
#include <memory>
#include <vector>

namespace headlight::app {

struct LoadedModel;

struct ProbeHeadRoles {
    analysis::GeneratedProbeSet probes;
    int layers = 0, heads = 0;
    std::vector<analysis::HeadRoleScores> scores; // layer-major
};

// Scores the model's heads on the probes of `set` under `variant`, on the calling thread, which
// must own the model's backend (no pass running). Null when `progress` stopped it; throws
// std::exception with a one-line reason for probes the model cannot take or a model whose
// heads have no roles (adaptive depth, early exit, pooled attention).
std::shared_ptr<const ProbeHeadRoles> scoreGeneratedProbes(const LoadedModel& model,
                                                           const analysis::GeneratedProbeSet& set,
                                                           const variants::VariantSpec& variant,
                                                           const analysis::ProbeProgress& progress);

// "8 generated probes (seed 0, 20 random tokens repeated twice)", as `headlight heads` prints
// its probe line.
QString probeSetPhrase(const analysis::GeneratedProbeSet& set);
} // namespace headlight::app
