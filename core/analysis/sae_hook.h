#pragma once
// Where an SAE reads a pass, by its TransformerLens hook name, on Headlight's trace:
//   blocks.L.hook_resid_pre   the input of block L: Trace::hiddenStates[L] (L = 0: the embeddings)
//   blocks.L.hook_resid_post  the output of block L: Trace::hiddenStates[L + 1], except for the
//                             last block, whose output HF's hidden_states (and so the trace) give
//                             after the final norm: there Trace::residualBeforeFinalNorm
//   blocks.L.hook_resid_mid   between attention and MLP: LayerTrace::residualMid
//   blocks.L.hook_attn_out    attention's update: LayerTrace::attentionOutput (on Gemma 2/3 after
//                             post_attention_layernorm, as TransformerLens's Gemma adds it)
//   blocks.L.hook_mlp_out     the MLP's update: LayerTrace::mlpOutput (on Gemma after
//                             post_feedforward_layernorm)
//   blocks.L.attn.hook_z      every head's output before W_O, [T, H·d_head]:
//   LayerTrace::headOutputs
// and the Hugging Face module names Gemma Scope 2 gives (config.json's hf_hook_point_in/out):
//   model.layers.L.output                             = blocks.L.hook_resid_post
//   model.layers.L.self_attn.o_proj.input             = blocks.L.attn.hook_z
//   model.layers.L.post_feedforward_layernorm.output  = blocks.L.hook_mlp_out (Gemma)
//   model.layers.L.post_attention_layernorm.output    = blocks.L.hook_attn_out on Gemma, whose
//                                                       norm of that name is on attention's
//                                                       output; elsewhere (Llama) it is the MLP's
//                                                       input norm, so the MLP's input
//   model.layers.L.pre_feedforward_layernorm.output   the MLP's input, after its norm and the
//                                                     norm's weight: LayerTrace::mlpInput (Gemma)
// The sub-layer hooks exist on pre-norm blocks of one residual stream; elsewhere the trace has no
// such tensor and they are refused.

#include "model/trace.h"

#include <string>

namespace headlight::analysis {

struct SaeHook {
    enum class Point { ResidPre, ResidPost, ResidMid, AttnOut, MlpOut, AttnZ, MlpIn };
    Point point = Point::ResidPre;
    int layer = 0;
};

// The hook `name` on a model of `layers` blocks, `sandwichNorms` for Gemma 2/3's norms on each
// sub-layer's output; throws std::invalid_argument with a one-line reason naming the supported
// hooks.
SaeHook parseSaeHook(const std::string& name, int layers, bool sandwichNorms = false);

// What a pass must capture for the hook (no attention maps).
CaptureRequest captureForHook(const SaeHook& hook, int layers);

// The hook's activations [T, width] from a pass captured with captureForHook; throws
// std::invalid_argument when the trace does not hold them (a model whose depth varies, a block
// wired without that tensor).
Tensor activationsAtHook(const Trace& trace, const SaeHook& hook, int layers);
} // namespace headlight::analysis
