#pragma once
// Where each architecture keeps its weights (each family's readWeights, core/model/families/) in a
// Hugging Face checkpoint, read into one uniform host-side layout. Every tensor's shape is checked
// against what config.json implies, and every value must be finite, so a wrong or corrupted
// checkpoint fails here with the tensor's name.
//
//   BERT / RoBERTa  [bert.|roberta.]embeddings.*,
//   encoder.layer.N.{attention.self.{query,key,value},
//                   attention.output.{dense,LayerNorm}, intermediate.dense,
//                   output.{dense,LayerNorm}}
//   DistilBERT      [distilbert.]embeddings.*, transformer.layer.N.{attention.{q,k,v,out}_lin,
//                   sa_layer_norm, ffn.lin{1,2}, output_layer_norm}
//   GPT-2           [transformer.]{wte,wpe,ln_f}, h.N.{ln_1, attn.c_attn (fused q|k|v),
//   attn.c_proj,
//                   ln_2, mlp.c_fc, mlp.c_proj}; Conv1D weights are [in, out] and are transposed
//                   here
//   Llama family    [model.]{embed_tokens, norm}, layers.N.{input_layernorm,
//                   self_attn.{q,k,v,o}_proj, post_attention_layernorm, mlp.{gate,up,down}_proj}
//                   (Qwen3 adds self_attn.{q,k}_norm)
//   OPT             [model.]decoder.{embed_tokens, embed_positions, final_layer_norm},
//                   layers.N.{self_attn.{q,k,v,out}_proj, self_attn_layer_norm, fc1, fc2,
//                   final_layer_norm}
//   GPT-NeoX        [gpt_neox.]{embed_in, final_layer_norm}, layers.N.{input_layernorm,
//                   attention.{query_key_value (per head q, k, v), dense},
//                   post_attention_layernorm, mlp.{dense_h_to_4h, dense_4h_to_h}}
//   GPT-J           [transformer.]{wte, ln_f}, h.N.{ln_1, attn.{q,k,v,out}_proj, mlp.{fc_in,
//                   fc_out}}
//   Phi-3           [model.]{embed_tokens, norm}, layers.N.{input_layernorm,
//                   self_attn.{qkv_proj (q | k | v), o_proj}, post_attention_layernorm,
//                   mlp.{gate_up_proj (gate | up), down_proj}}
//   Headlight zoo   docs/zoo-format.md (core/model/zoo_layout.cpp)
//
// Legacy names load under their modern ones (LayerNorm.gamma is LayerNorm.weight,
// io/legacy_names.h). A tensor the layout does not read is refused unless Hugging Face ignores it
// on load too (model/unexpected_tensors.h).

#include "io/checkpoint.h"
#include "model/model_spec.h"
#include "tensor/tensor.h"

#include <vector>

namespace headlight {

struct HostLinear {
    Tensor weight; // [out, in], nn.Linear layout; empty when `stored` holds it
    Tensor bias;   // [out], empty when the layer has none
    io::StoredMatrix stored; // the weight left in its mapped file, in the stored dtype
    bool present() const { return !weight.empty() || stored.valid(); }
};

struct HostNorm {
    Tensor gamma; // [D]
    Tensor beta;  // [D], empty for RMSNorm
};

struct HostFfn {
    HostLinear up, gate, down; // gate is empty unless the FFN is gated (GLU family)
};

// GTrXL's GRU-style gate (Parisotto et al. 2019): six bias-free [D, D] maps and b_g.
struct HostGate {
    HostLinear wr, ur, wz, uz, wg, ug;
    Tensor bias; // b_g [D]
};

struct HostLayer {
    HostLinear query, key, value, output;
    HostNorm attentionNorm,
        ffnNorm;               // post-LN: after each residual add; pre-LN: before each sub-layer
    HostLinear up, gate, down; // gate is empty unless the FFN is gated (SwiGLU)
    HostNorm queryNorm, keyNorm; // per-head RMSNorm [head_dim] of q and k (Qwen3); else empty
    // Gemma: the norms of the attention's and the FFN's outputs, before each residual add.
    HostNorm postAttentionNorm, postFfnNorm;
    // Zoo only (docs/zoo-format.md); empty elsewhere.
    HostFfn ffnPre; // Macaron's first half-step FFN
    HostNorm ffnPreNorm;
    std::vector<HostFfn> experts;                    // mixture of experts, replacing up/gate/down
    Tensor router;                                   // [E, D]
    Tensor rezeroAttention, rezeroFfn, rezeroFfnPre; // ReZero α, [1] each
    HostGate gateAttention, gateFfn;                 // GTrXL
    HostLinear relative;                             // Transformer-XL W_R [D, D], no bias
    Tensor relativeU, relativeV;                     // Transformer-XL u, v [D]
    Tensor linformerE, linformerF;                   // Linformer's learned E, F [k, P]
};

// The head that turns a final hidden state into vocabulary logits, as the checkpoint keeps it.
//   Tied      logits = h · Eᵀ (GPT-2, OPT, tied Llama-family models, the zoo)
//   Untied    logits = h · Wᵀ, W = lm_head.weight [V, D] (Llama, Mistral, untied Qwen)
//   MaskedLm  BERT's cls.predictions: LayerNorm(act(dense(h))) · Eᵀ + b
struct HostLmHead {
    enum class Kind { None, Tied, Untied, MaskedLm };
    Kind kind = Kind::None;
    Tensor weight;          // [V, D] when Untied and not `stored`; empty when tied
    io::StoredMatrix stored; // Untied: [V, D] left in its mapped file, in the stored dtype
    Tensor bias;            // [V] (MaskedLm), empty when none
    HostLinear transform;   // MaskedLm's dense [D, D]
    HostNorm transformNorm; // MaskedLm's LayerNorm
    std::string absence;    // Kind::None: why the checkpoint has no head, one line
};

struct HostWeights {
    Tensor tokenEmbedding;     // [V, D]; empty when `tokenEmbeddingStored` holds it
    io::StoredMatrix tokenEmbeddingStored; // the table left in its mapped file (Llama layout)
    Tensor positionEmbedding;  // [P, D], empty for rotary models
    Tensor tokenTypeEmbedding; // [types, D], empty when the model has none
    HostNorm embeddingNorm;    // BERT family only
    HostNorm finalNorm;        // GPT-2 and Llama family only
    std::vector<HostLayer> layers;
    Tensor relativeBias; // zoo, T5 position buckets: [buckets, H]
    HostLinear halting;  // zoo, ACT halting unit: [1, D] and [1]
    HostLmHead lmHead;
    std::string
        prefix; // the prefix the checkpoint used ("", "bert.", "transformer.", "model.", ...)
};

// Throws io::CheckpointError naming the tensor and the problem: missing, misshapen, not finite
// or unexpected.
HostWeights readWeights(const io::Checkpoint& checkpoint, const ModelSpec& spec);
} // namespace headlight
