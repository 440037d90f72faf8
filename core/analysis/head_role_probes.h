#pragma once
// Every head of a model scored for its roles over a probe set (docs/head-roles.md): each probe
// run through the model and its attention added to a HeadRoleAccumulator. What `headlight heads`
// runs, and what the training scrubber scores at every checkpoint.

#include "analysis/head_roles.h"
#include "model/transformer.h"
#include "variants/variant_spec.h"

#include <functional>
#include <vector>

namespace headlight::analysis {

// Called after each probe with how many have run; false stops the scoring there.
using ProbeProgress = std::function<bool(int done, int total)>;

// The generated probes of `set` for the model (repeatedRandomProbes with its vocabulary and pad
// id: the ids `headlight heads --seed --probes --length` scores). Throws std::invalid_argument
// in one line when twice the length does not fit the model's context or its vocabulary has too
// few ids.
std::vector<std::vector<int32_t>> generatedProbes(const GeneratedProbeSet& set,
                                                  const ModelSpec& spec);

// Throws std::runtime_error (one line naming the probe or layer) for a model whose depth depends
// on its input, that exits early, or whose attention is not token by token; and what
// HeadRoleAccumulator::add throws. Empty when `progress` stopped it.
std::vector<HeadRoleScores> scoreProbeRoles(const TransformerModel& model,
                                            const std::vector<std::vector<int32_t>>& probes,
                                            const CustomPattern& pattern,
                                            const variants::VariantSpec& variant,
                                            const ProbeProgress& progress = {});
} // namespace headlight::analysis
