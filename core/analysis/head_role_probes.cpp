#include "analysis/head_role_probes.h"

#include <stdexcept>
#include <string>

namespace headlight::analysis {
namespace {

// A model whose probes would not have the same layers has no per-layer roles.
void checkDepth(const Trace& trace, const ModelSpec& spec, std::size_t probe) {
    const auto ran = int(trace.layers.size());
    if (ran > spec.layers)
        throw std::runtime_error("probe " + std::to_string(probe) + " ran " + std::to_string(ran) +
                                 " steps of the model's " + std::to_string(spec.layers) +
                                 " layer(s) (adaptive depth): heads scores models whose depth is "
                                 "fixed");
    if (ran != spec.layers || trace.layersRun != spec.layers)
        throw std::runtime_error("probe " + std::to_string(probe) + " stopped after " +
                                 std::to_string(trace.layersRun) + " of " +
                                 std::to_string(spec.layers) +
                                 " layers (early exit): heads scores every layer");
}

void checkTokenByToken(const Trace& trace, int64_t tokens) {
    for (std::size_t l = 0; l < trace.layers.size(); ++l) {
        const Tensor& map = trace.layers[l].probabilities;
        if ((map.dim(1) == tokens && map.dim(2) == tokens) ||
            trace.internals.contains("funnel_merge"))
            continue;
        throw std::runtime_error("layer " + std::to_string(l) +
                                 "'s attention is not token by token (" +
                                 std::to_string(map.dim(1)) + " x " + std::to_string(map.dim(2)) +
                                 "): its heads have no role scores");
    }
}
} // namespace

std::vector<std::vector<int32_t>> generatedProbes(const GeneratedProbeSet& set,
                                                  const ModelSpec& spec) {
    if (spec.maxPositions > 0 && 2 * int64_t(set.length) >= spec.maxPositions)
        throw std::invalid_argument(
            "the model's context of " + std::to_string(spec.maxPositions) +
            " positions is too small for probes of " + std::to_string(2 * int64_t(set.length)) +
            " tokens: give a length below " + std::to_string((spec.maxPositions + 1) / 2));
    return repeatedRandomProbes(uint64_t(set.seed), set.count, set.length, spec.vocabSize,
                                spec.padTokenId);
}

std::vector<HeadRoleScores> scoreProbeRoles(const TransformerModel& model,
                                            const std::vector<std::vector<int32_t>>& probes,
                                            const CustomPattern& pattern,
                                            const variants::VariantSpec& variant,
                                            const ProbeProgress& progress) {
    const ModelSpec& spec = model.spec();
    HeadRoleAccumulator accumulator(spec.layers, spec.heads, pattern);
    CaptureRequest capture;
    capture.finalState = false;
    for (std::size_t p = 0; p < probes.size(); ++p) {
        const Trace trace = model.forward(ModelInput{probes[p], {}, {}}, capture, variant);
        checkDepth(trace, spec, p);
        checkTokenByToken(trace, int64_t(probes[p].size()));
        accumulator.add(probes[p], trace.stackedProbabilities());
        if (progress && !progress(int(p) + 1, int(probes.size()))) return {};
    }
    return accumulator.scores();
}
} // namespace headlight::analysis
