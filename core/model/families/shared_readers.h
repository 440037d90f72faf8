#pragma once
// Config readers and load rules that several families share: BERT's keys (BERT, RoBERTa), GPT-2's
// (GPT-2, GPT-J), the Llama keys (Llama, Mistral, Qwen2, Qwen3) and the rotary buffers old
// Llama-style checkpoints saved.

#include "model/config_reader.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace headlight::families {

// BertConfig's keys (bert.cpp); RoBERTa's position ids start after its padding index.
void readBertConfig(const ConfigReader& config, ModelSpec& spec, bool roberta);
// GPT2Config's keys (n_embd, n_layer, n_head, n_inner, ...), which GPTJConfig repeats with the
// same defaults: a causal pre-LN decoder (gpt2.cpp).
void readGpt2Config(const ConfigReader& config, ModelSpec& spec);
// LlamaConfig's keys, pre-RMSNorm rotary wiring (llama.cpp).
void readLlamaConfig(const ConfigReader& config, ModelSpec& spec, int defaultPositions);
// Qwen2 and Qwen3 apply sliding_window only with use_sliding_window, and only to layers from
// max_window_layers on (or those layer_types marks "sliding_attention"); a model mixing windowed
// and full layers is refused (shared_readers.cpp).
void readQwenWindow(const ConfigReader& config, ModelSpec& spec);
// [model.]layers.N.self_attn.rotary_emb.inv_freq and [model.]rotary_emb.inv_freq (llama.cpp).
bool isRotaryBuffer(const std::string& name);
// The causal-mask buffers old GPT-2 and GPT-J checkpoints saved under h.N.attn.
bool isAttentionMaskBuffer(const std::string& name);
// The task heads HF's task classes put beside every base model (lm_head., score., classifier.,
// qa_outputs.) and a family's own.
std::vector<std::string> taskHeads(std::initializer_list<const char*> own = {});
} // namespace headlight::families
