#pragma once
// Every head of a model scored for its roles over a probe set (docs/head-roles.md): each probe
// run through the model and its attention added to a HeadRoleAccumulator. What `headlight heads`
// runs, and what the training scrubber scores at every checkpoint.

#include "analysis/head_roles.h"
#include "model/transformer.h"
#include "variants/variant_spec.h"

#include <vector>

namespace headlight::analysis {

// Throws std::runtime_error (one line naming the probe or layer) for a model whose depth depends
// on its input, that exits early, or whose attention is not token by token; and what
// HeadRoleAccumulator::add throws.
std::vector<HeadRoleScores> scoreProbeRoles(const TransformerModel& model,
                                            const std::vector<std::vector<int32_t>>& probes,
                                            const CustomPattern& pattern,
                                            const variants::VariantSpec& variant);
} // namespace headlight::analysis
