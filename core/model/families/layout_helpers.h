#pragma once
// Pieces the families' weight layouts share: finding the prefix a checkpoint saved the model
// under, Conv1D's transposed weights, fused projections cut into rows, and the encoder and
// Llama-style layouts that several families use unchanged.

#include "model/weight_reader.h"

#include <set>
#include <string>
#include <vector>

namespace headlight::families {

// The reader for the first prefix under which `probe` exists; throws naming every name tried.
WeightReader readerFor(const io::Checkpoint& checkpoint, const std::vector<std::string>& prefixes,
                       const std::string& probe, std::set<std::string>& read);

Tensor transposed(const Tensor& t);
// Rows [begin, begin + count) of a [R, C] matrix or a [R] vector.
Tensor rowsOf(const Tensor& t, int64_t begin, int64_t count);
// GPT-2's Conv1D stores [in, out]; transposed to the nn.Linear layout the backends use.
HostLinear conv1d(const WeightReader& r, const std::string& name, int64_t in, int64_t out);

// Where a BERT-style encoder keeps the weights of layer N, under "<layer>N.". BERT and RoBERTa
// share these names; DistilBERT renamed every one but kept the structure.
struct EncoderLayerNames {
    const char* layer;
    const char* query;
    const char* key;
    const char* value;
    const char* output;
    const char* attentionNorm;
    const char* up;
    const char* down;
    const char* ffnNorm;
};

// BERT, RoBERTa and DistilBERT: learned positions, an embedding LayerNorm, token types where the
// config has them, post-LN layers; the whole model optionally under "<model_type>.".
HostWeights readEncoderWeights(const io::Checkpoint& checkpoint, const ModelSpec& s,
                               const EncoderLayerNames& names, std::set<std::string>& read);
// The embedding tables readEncoderWeights widens to f32 (word, position, token types), under the
// prefix it would read them with; none when the checkpoint has no word embeddings.
std::vector<std::string> encoderEmbeddingTables(const io::Checkpoint& checkpoint,
                                                const ModelSpec& s);

// The Llama layout ([model.]embed_tokens, layers.N.*, norm), shared by Llama, Mistral, Qwen2 and
// Qwen3. Llama, Mistral and Qwen3 bias o_proj whenever q, k and v are biased (attention_bias).
HostWeights readLlamaWeights(const io::Checkpoint& checkpoint, const ModelSpec& s,
                             std::set<std::string>& read);
// Qwen2: the same layout, but o_proj never carries a bias, whatever q, k and v do.
HostWeights readQwen2Weights(const io::Checkpoint& checkpoint, const ModelSpec& s,
                             std::set<std::string>& read);
} // namespace headlight::families
