#pragma once
// Tensors of a checkpoint that its layout did not read. Hugging Face drops some of them silently
// when it loads the base model (AutoModel): non-persistent buffers that old versions saved, the
// pooler, and task heads (BertModel from a BertForMaskedLM checkpoint drops cls.*). Headlight
// runs the base model, so it drops the same ones; any other tensor means the checkpoint is not
// what config.json says, and loading it is refused with the tensor's name.
//
// Each family declares its own (core/model/families/, model_family.h):
//   every family    task heads (top level): lm_head.*, score.*, classifier.*, qa_outputs.*
//   BERT            cls.*; [bert.]pooler.*; [bert.]embeddings.{position_ids,token_type_ids}
//   RoBERTa         [roberta.]pooler.*; [roberta.]embeddings.{position_ids,token_type_ids}
//   DistilBERT      vocab_transform.*, vocab_layer_norm.*, vocab_projector.*, pre_classifier.*;
//                   [distilbert.]embeddings.position_ids
//   GPT-2           [transformer.]h.N.attn.{bias,masked_bias} (the causal-mask buffers)
//   Llama family    [model.]layers.N.self_attn.rotary_emb.inv_freq, [model.]rotary_emb.inv_freq
//   OPT             nothing beyond the task heads
//   GPT-NeoX        embed_out.*; [gpt_neox.]layers.N.attention.{bias,masked_bias,
//                   rotary_emb.inv_freq}
//   GPT-J           [transformer.]h.N.attn.{bias,masked_bias}
//   Phi-3           as the Llama family
//   Headlight zoo   nothing: the zoo's own format has no extra tensors

#include "io/checkpoint.h"
#include "model/model_spec.h"

#include <set>
#include <string>
#include <vector>

namespace headlight {

// Whether Hugging Face drops `name` when it loads an `architecture` model whose weights sit under
// `prefix` ("", "bert.", "transformer.", "model.", ...).
bool ignoredOnLoad(Architecture architecture, const std::string& prefix, const std::string& name);

// `name` is `before` + a layer number + one of `afters` (e.g. "h.3.attn.bias").
bool isLayerBuffer(const std::string& name, const std::string& before,
                   const std::vector<std::string>& afters);

// Throws io::CheckpointError naming the first tensor (and how many more) that is neither in
// `read` nor ignored on load.
void rejectUnexpectedTensors(const io::Checkpoint& checkpoint, Architecture architecture,
                             const std::string& prefix, const std::set<std::string>& read);
} // namespace headlight
