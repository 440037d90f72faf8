#include "analysis/sae_hook.h"

#include <regex>
#include <stdexcept>

namespace headlight::analysis {
namespace {

std::string supportedHooks(int layers) {
    return "the supported hooks are blocks.L.hook_resid_pre and blocks.L.hook_resid_post, L from "
           "0 to " +
           std::to_string(layers - 1);
}
} // namespace

SaeHook parseSaeHook(const std::string& name, int layers) {
    static const std::regex pattern(R"(blocks\.([0-9]{1,6})\.hook_resid_(pre|mid|post))");
    std::smatch match;
    if (name.size() > 200 || !std::regex_match(name, match, pattern))
        throw std::invalid_argument(
            "the SAE reads hook \"" + name.substr(0, 200) +
            "\", which Headlight does not capture: " + supportedHooks(layers));
    SaeHook hook;
    hook.layer = std::stoi(match[1].str());
    if (match[2] == "mid")
        throw std::invalid_argument("the SAE reads " + name +
                                    " (between attention and MLP), which the trace does not "
                                    "capture: " +
                                    supportedHooks(layers));
    if (hook.layer >= layers)
        throw std::invalid_argument("the SAE reads " + name + " but the model has " +
                                    std::to_string(layers) + " blocks: " + supportedHooks(layers));
    hook.point = match[2] == "pre" ? SaeHook::Point::ResidPre : SaeHook::Point::ResidPost;
    return hook;
}

CaptureRequest captureForHook(const SaeHook& hook, int layers) {
    CaptureRequest capture;
    capture.probabilities = false;
    const bool last = hook.point == SaeHook::Point::ResidPost && hook.layer == layers - 1;
    capture.residualBeforeFinalNorm = last;
    capture.hiddenStates = !last;
    return capture;
}

Tensor activationsAtHook(const Trace& trace, const SaeHook& hook, int layers) {
    if (trace.layersRun != layers)
        throw std::invalid_argument("the pass ran " + std::to_string(trace.layersRun) + " of " +
                                    std::to_string(layers) +
                                    " blocks (a model whose depth varies): SAE hooks need all");
    if (hook.point == SaeHook::Point::ResidPost && hook.layer == layers - 1) {
        if (trace.residualBeforeFinalNorm.empty())
            throw std::invalid_argument("the pass gave no residual before the final norm");
        return trace.residualBeforeFinalNorm;
    }
    const auto index =
        std::size_t(hook.point == SaeHook::Point::ResidPre ? hook.layer : hook.layer + 1);
    if (trace.hiddenStates.size() != std::size_t(layers) + 1)
        throw std::invalid_argument("the pass gave " + std::to_string(trace.hiddenStates.size()) +
                                    " hidden states for " + std::to_string(layers) +
                                    " blocks (a model whose depth varies): SAE hooks need one "
                                    "per block");
    return trace.hiddenStates[index];
}
} // namespace headlight::analysis
