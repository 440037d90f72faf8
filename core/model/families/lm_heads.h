#pragma once
// The LM heads Hugging Face keeps on load (model_family.h's readLmHead), read beside the base
// model so that every checkpoint with a head gives next-token (or masked-token) logits.

#include "model/checkpoint_layout.h"

#include <set>
#include <string>

namespace headlight::families {

// Causal LMs (GPT-2, OPT, the Llama family): tie_word_embeddings reuses the token embedding;
// untied, lm_head.weight [V, D] must be there (a base-model checkpoint without it has no head).
HostLmHead readCausalLmHead(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                            std::set<std::string>& read);
// GPTNeoXForCausalLM's embed_out.weight [V, D], never tied.
HostLmHead readEmbedOutHead(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                            std::set<std::string>& read);
// GPTJForCausalLM's lm_head: weight [V, D] and bias [V].
HostLmHead readBiasedLmHead(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                            std::set<std::string>& read);
// BertForMaskedLM's cls.predictions: transform.dense, transform.LayerNorm, the decoder (tied to
// the word embeddings unless cls.predictions.decoder.weight is stored) and its bias.
HostLmHead readBertMaskedLmHead(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                                std::set<std::string>& read);
// The zoo's models are trained through their tied embedding (tools/zoo).
HostLmHead readTiedHead(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                        std::set<std::string>& read);
} // namespace headlight::families
