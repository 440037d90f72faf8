#pragma once
// Where an SAE reads the residual stream, by its TransformerLens hook name, on Headlight's trace:
//   blocks.L.hook_resid_pre   the input of block L: Trace::hiddenStates[L] (L = 0: the embeddings)
//   blocks.L.hook_resid_post  the output of block L: Trace::hiddenStates[L + 1], except for the
//                             last block, whose output HF's hidden_states (and so the trace) give
//                             after the final norm: there Trace::residualBeforeFinalNorm
// blocks.L.hook_resid_mid (between attention and MLP) is not captured by the trace, and is
// refused with the others.

#include "model/trace.h"

#include <string>

namespace headlight::analysis {

struct SaeHook {
    enum class Point { ResidPre, ResidPost };
    Point point = Point::ResidPre;
    int layer = 0;
};

// The hook `name` on a model of `layers` blocks; throws std::invalid_argument with a one-line
// reason naming the supported hooks.
SaeHook parseSaeHook(const std::string& name, int layers);

// What a pass must capture for the hook (no attention maps).
CaptureRequest captureForHook(const SaeHook& hook, int layers);

// The hook's activations [T, D] from a pass captured with captureForHook; throws
// std::invalid_argument when the trace does not hold them (a model whose depth varies).
Tensor activationsAtHook(const Trace& trace, const SaeHook& hook, int layers);
} // namespace headlight::analysis
