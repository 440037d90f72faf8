#pragma once
// ModelSpec: what config.json says about a model, in typed form. One struct covers the supported
// Hugging Face architectures; each field notes which config key it comes from. Each family reads
// its own keys in core/model/families/ (model_family.h).

#include "variants/variant_spec.h"

#include <optional>
#include <string>
#include <vector>

namespace headlight {

enum class Architecture {
    Bert,
    Roberta,
    DistilBert,
    Gpt2,
    Llama,
    Qwen2,
    Mistral,
    Qwen3,
    Opt,
    Gemma2,
    Gemma3,
    Headlight
};
const char* architectureName(Architecture arch); // "bert", "roberta", ... (config model_type)

enum class Activation { Gelu, GeluTanh, Relu, Silu }; // Gelu = exact erf form
enum class NormKind { LayerNorm, RmsNorm };
enum class PositionsKind { Learned, Rotary }; // a learned table added to the embeddings, or RoPE

struct ModelSpec {
    Architecture architecture = Architecture::Bert;
    std::string modelType;            // model_type as written
    std::string architectureClass;    // architectures[0], e.g. "BertForMaskedLM" (may be empty)
    int vocabSize = 0;                // vocab_size
    int hidden = 0;                   // hidden_size | n_embd | dim (DistilBERT)
    int layers = 0;                   // num_hidden_layers | n_layer | n_layers
    int heads = 0;                    // num_attention_heads | n_head | n_heads
    int kvHeads = 0;                  // num_key_value_heads (Llama family), else = heads
    int headDim = 0;                  // head_dim if given, else hidden / heads
    int intermediate = 0;             // intermediate_size | n_inner (default 4·hidden) | hidden_dim
    int maxPositions = 0;             // max_position_embeddings | n_positions
    int typeVocabSize = 0;            // type_vocab_size (BERT, RoBERTa); 0 = no token types
    float normEps = 1e-12f;           // layer_norm_eps | layer_norm_epsilon | rms_norm_eps (DistilBERT: 1e-12)
    NormKind norm = NormKind::LayerNorm;
    Activation activation = Activation::Gelu; // hidden_act | activation_function | activation
    bool causal = false;              // decoder-only (GPT-2, Llama family)
    bool preNorm = false; // norms before each sub-layer (GPT-2, Llama family), else after
    PositionsKind positions = PositionsKind::Learned;
    bool qkNorm = false;              // per-head RMSNorm of q and k before RoPE (Qwen3)
    int padTokenId = -1;              // pad_token_id, -1 when absent/null
    int positionOffset = 0;           // RoBERTa: padding_idx + 1 (position ids start there)
    double ropeTheta = 10000.0;       // rope_theta
    std::optional<int> slidingWindow; // Mistral sliding_window (null or absent = none)
    bool tieEmbeddings = false;       // tie_word_embeddings (GPT-2 default true, Llama false)
    bool attentionBias = false;       // q/k/v biases: BERT-family and GPT-2 yes; Qwen2 yes (q,k,v only); Llama attention_bias
    bool scaleAttnWeights = true;     // GPT-2 scale_attn_weights
    // Gemma 2 / Gemma 3 (families/gemma.cpp); the defaults leave every other family unchanged.
    float embeddingScale = 1.0f;    // token embeddings × sqrt(hidden_size) (Gemma)
    float attentionScale = 0.0f;    // query_pre_attn_scalar^-0.5; 0 = 1/sqrt(head_dim)
    float attentionSoftcap = 0.0f;  // attn_logit_softcapping: s → c·tanh(s/c); 0 = none
    float finalSoftcap = 0.0f;      // final_logit_softcapping on the logits; 0 = none
    std::vector<bool> globalLayers; // layers that ignore slidingWindow; empty = none do
    double localRopeTheta = 0.0;    // rope_local_base_freq of windowed layers; 0 = ropeTheta
    bool sandwichNorms = false; // a norm on each sub-layer's output too, before the residual add
    variants::VariantSpec zoo;        // Headlight zoo: the `headlight` section (docs/zoo-format.md)
};

// Parses config.json text (a folder's config); throws io::CheckpointError with "config.json: ..."
// on malformed JSON, an unknown architecture (listing the supported ones), missing or absurd
// sizes (non-positive, hidden not divisible by heads, more than 1,000,000 hidden / 10,000 layers).
ModelSpec parseModelConfig(const std::string& jsonText, const std::string& sourceName = "config.json");
ModelSpec loadModelConfig(const std::string& folder); // reads folder/config.json
} // namespace headlight
