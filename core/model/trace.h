#pragma once
// What one forward pass did, as far as the open views asked for it. Capture is selective so that
// memory follows what is shown: a BERT-base pass at T = 512 with every probability map kept is
// 12 · 12 · 512² · 4 B = 151 MB, while one layer is 12.6 MB.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace headlight {

struct CaptureRequest {
    bool probabilities = true;  // softmax probabilities [H, T, T] per captured layer
    bool scores = false;        // pre-softmax scores (scaled, masked) [H, T, T]
    bool hiddenStates = false;  // [T, D] after the embeddings and after every layer
    bool internals = false;     // the variant's own tensors (masks, biases, buckets, ...; docs/variants.md)
    bool logits = false;        // logits [T, V] through the checkpoint's LM head (tied, lm_head or
                                // BERT's masked-LM head); refused when it has none
    bool headOutputs = false;   // each head's output [H, T, d] before the output projection
    bool queriesKeys = false;   // per captured layer the queries and keys attention read (post-RoPE),
                                // from which the atlas rebuilds any map (exact attention only)
    std::vector<int> layers;    // layers to capture; empty means all
    std::vector<int> heads;     // heads kept in the trace; empty means all (the device computes
                                // every head of a captured layer, the host keeps these)
    bool finalState = true;     // Trace::lastHiddenState; without it, logits and hidden states, a
                                // plain stack without early exit stops after the last layer in
                                // `layers` (the later layers cannot change what it captured)
    bool residualBeforeFinalNorm = false; // Trace::residualBeforeFinalNorm (SAEs read the last
                                          // block's output, which hiddenStates gives normed)
    bool sublayers = false; // per captured layer LayerTrace's residualMid, attentionOutput,
                            // mlpInput and mlpOutput (pre-norm blocks of one residual stream)

    bool wantsLayer(int layer) const;
};

// How a layer's attention turned q·k into scores, for rebuilding them from queries and keys.
struct AttentionRule {
    float scale = 1.0f;     // q·k is multiplied by this
    int slidingWindow = 0;  // 0: none (this layer's, which may differ from the model's)
    float softcap = 0.0f;   // scores → c·tanh(scores / c) when c > 0
};

struct LayerTrace {
    std::vector<int> heads; // which heads the tensors hold, in order
    Tensor probabilities;   // [heads, T, T], empty when not captured
    Tensor scores;          // [heads, T, T], empty when not captured
    std::map<std::string, Tensor> internals; // variant internals by name, all heads
    Tensor headOutputs; // [H, T, d] of every head (as the output projection read them), or empty
    Tensor queries;              // [T, heads·d] when queriesKeys was asked for
    Tensor keys;                 // [T, kvHeads·d]
    AttentionRule attentionRule; // with queries and keys
    // With CaptureRequest::sublayers, on pre-norm blocks x → x + A → x + A + M (every tensor
    // [T, D]; empty where the block is wired otherwise: post-norm, parallel, ReZero, GTrXL):
    Tensor attentionOutput; // A: attention's update as added to the residual stream, after
                            // Gemma's post_attention_layernorm (TransformerLens's hook_attn_out)
    Tensor residualMid;     // x + A (hook_resid_mid)
    Tensor mlpInput;        // N(x + A): what the MLP reads, after its norm and the norm's weight
                            // (HF's pre_feedforward_layernorm output on Gemma)
    Tensor mlpOutput;       // M, after Gemma's post_feedforward_layernorm (hook_mlp_out)
};

// Keeps the listed heads of a [H, T, T] tensor (all when `heads` is empty); throws on a bad index.
Tensor selectHeads(const Tensor& perHead, const std::vector<int>& heads);

struct Trace {
    std::vector<int32_t> ids;     // [T]
    std::vector<uint8_t> valid;   // [T], 0 for padding (excluded from every statistic)
    std::vector<LayerTrace> layers;     // one per model layer
    std::vector<Tensor> hiddenStates;   // L + 1 tensors [T, D] when requested (as HF's hidden_states)
    Tensor lastHiddenState;             // [T, D] (after the final norm where the model has one)
    Tensor residualBeforeFinalNorm;     // [T, D] the last layer's output, before any final norm,
                                        // when requested (TransformerLens's last hook_resid_post)
    Tensor logits;                      // [T, V] when requested: the LM head on lastHiddenState
    std::map<std::string, Tensor> internals; // model-level variant internals (nominal mask, exits, ...)
    double forwardMs = 0.0;             // wall time of the forward pass, capture included
    int layersRun = 0; // layers the depth loop ran (fewer than the model's when it stopped early;
                       // then lastHiddenState is empty, and a last layer captured for its
                       // queries and keys alone ran only as far as them)

    // Probabilities of every layer stacked to [L, H, T, T]; throws when a layer was not captured.
    // A funnel's pooled maps [H, T_q, T_k] enter at token resolution (tokenResolution).
    Tensor stackedProbabilities() const;
};

// A Funnel Transformer map [H, T_q, T_k] of pooled rows on the input tokens [H, T, T], with
// `merge` the trace's funnel_merge [blocks, T] (the pooled row of each token per block): token i
// reads the row of the pooled query covering it, and a pooled key's weight is shared equally
// among the tokens it covers, so rows still sum to 1 and every per-token view can draw it.
Tensor tokenResolution(const Tensor& map, const Tensor& merge);
} // namespace headlight
