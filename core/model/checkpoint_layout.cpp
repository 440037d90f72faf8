#include "checkpoint_layout.h"

#include "model/unexpected_tensors.h"
#include "model/weight_reader.h"

namespace headlight {
namespace {

// The first prefix under which `probe` exists.
WeightReader readerFor(const io::Checkpoint& checkpoint, const std::vector<std::string>& prefixes,
                       const std::string& probe, std::set<std::string>& read) {
    for (const std::string& prefix : prefixes)
        if (checkpoint.contains(prefix + probe)) return WeightReader(checkpoint, prefix, read);
    std::string tried;
    for (const std::string& prefix : prefixes)
        tried += (tried.empty() ? "'" : ", '") + prefix + probe + "'";
    throw io::CheckpointError(checkpoint.folder() + ": no tensor " + tried +
                              " — is this the architecture config.json names?");
}

Tensor transposed(const Tensor& t) {
    RowMatrix m = t.matrix().transpose();
    return Tensor({t.dim(1), t.dim(0)}, std::vector<float>(m.data(), m.data() + m.size()));
}

Tensor rowsOf(const Tensor& t, int64_t begin, int64_t count) {
    const int64_t cols = t.rank() == 2 ? t.dim(1) : 1;
    std::vector<float> values(t.values().begin() + begin * cols,
                              t.values().begin() + (begin + count) * cols);
    return t.rank() == 2 ? Tensor({count, cols}, std::move(values))
                         : Tensor({count}, std::move(values));
}

// Where a BERT-style encoder keeps the weights of layer N, under "<layer>N.". BERT and RoBERTa
// share these names; DistilBERT renamed every one but kept the structure, so one reader serves
// all three.
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

constexpr EncoderLayerNames kBertLayer{
    "encoder.layer.",       "attention.self.query",   "attention.self.key",
    "attention.self.value", "attention.output.dense", "attention.output.LayerNorm",
    "intermediate.dense",   "output.dense",           "output.LayerNorm"};
constexpr EncoderLayerNames kDistilBertLayer{
    "transformer.layer.", "attention.q_lin",   "attention.k_lin",
    "attention.v_lin",    "attention.out_lin", "sa_layer_norm",
    "ffn.lin1",           "ffn.lin2",          "output_layer_norm"};

// BERT, RoBERTa and DistilBERT: learned positions, an embedding LayerNorm, token types where the
// config has them (DistilBERT has none), post-LN layers; the whole model optionally under the
// model type's prefix ("bert.", "roberta.", "distilbert."), as task heads save it.
HostWeights readEncoder(const io::Checkpoint& checkpoint, const ModelSpec& s,
                        const EncoderLayerNames& names, std::set<std::string>& read) {
    const std::string root = std::string(architectureName(s.architecture)) + ".";
    const WeightReader r =
        readerFor(checkpoint, {"", root}, "embeddings.word_embeddings.weight", read);
    const int64_t d = s.hidden, f = s.intermediate;
    HostWeights w;
    w.prefix = r.prefix();
    w.tokenEmbedding = r.get("embeddings.word_embeddings.weight", {s.vocabSize, d});
    w.positionEmbedding = r.get("embeddings.position_embeddings.weight", {s.maxPositions, d});
    if (s.typeVocabSize > 0)
        w.tokenTypeEmbedding =
            r.get("embeddings.token_type_embeddings.weight", {s.typeVocabSize, d});
    w.embeddingNorm = r.layerNorm("embeddings.LayerNorm", d);
    for (int i = 0; i < s.layers; ++i) {
        const std::string l = names.layer + std::to_string(i) + ".";
        HostLayer layer;
        layer.query = r.linear(l + names.query, d, d);
        layer.key = r.linear(l + names.key, d, d);
        layer.value = r.linear(l + names.value, d, d);
        layer.output = r.linear(l + names.output, d, d);
        layer.attentionNorm = r.layerNorm(l + names.attentionNorm, d);
        layer.up = r.linear(l + names.up, f, d);
        layer.down = r.linear(l + names.down, d, f);
        layer.ffnNorm = r.layerNorm(l + names.ffnNorm, d);
        w.layers.push_back(std::move(layer));
    }
    return w;
}

// GPT-2's Conv1D stores [in, out]; transpose to the nn.Linear layout the backends use.
HostLinear conv1d(const WeightReader& r, const std::string& name, int64_t in, int64_t out) {
    return {transposed(r.get(name + ".weight", {in, out})), r.get(name + ".bias", {out})};
}

HostWeights readGpt2(const io::Checkpoint& checkpoint, const ModelSpec& s,
                     std::set<std::string>& read) {
    const WeightReader r = readerFor(checkpoint, {"", "transformer."}, "wte.weight", read);
    const int64_t d = s.hidden, f = s.intermediate;
    HostWeights w;
    w.prefix = r.prefix();
    w.tokenEmbedding = r.get("wte.weight", {s.vocabSize, d});
    w.positionEmbedding = r.get("wpe.weight", {s.maxPositions, d});
    w.finalNorm = r.layerNorm("ln_f", d);
    for (int i = 0; i < s.layers; ++i) {
        const std::string l = "h." + std::to_string(i) + ".";
        HostLayer layer;
        layer.attentionNorm = r.layerNorm(l + "ln_1", d);
        const HostLinear fused = conv1d(r, l + "attn.c_attn", d, 3 * d); // rows: q | k | v
        layer.query = {rowsOf(fused.weight, 0, d), rowsOf(fused.bias, 0, d)};
        layer.key = {rowsOf(fused.weight, d, d), rowsOf(fused.bias, d, d)};
        layer.value = {rowsOf(fused.weight, 2 * d, d), rowsOf(fused.bias, 2 * d, d)};
        layer.output = conv1d(r, l + "attn.c_proj", d, d);
        layer.ffnNorm = r.layerNorm(l + "ln_2", d);
        layer.up = conv1d(r, l + "mlp.c_fc", d, f);
        layer.down = conv1d(r, l + "mlp.c_proj", f, d);
        w.layers.push_back(std::move(layer));
    }
    return w;
}

HostWeights readLlamaFamily(const io::Checkpoint& checkpoint, const ModelSpec& s,
                            std::set<std::string>& read) {
    const WeightReader r = readerFor(checkpoint, {"model.", ""}, "embed_tokens.weight", read);
    const int64_t d = s.hidden, f = s.intermediate, qd = int64_t(s.heads) * s.headDim,
                  kvd = int64_t(s.kvHeads) * s.headDim;
    const bool qkvBias = s.attentionBias;
    HostWeights w;
    w.prefix = r.prefix();
    w.tokenEmbedding = r.get("embed_tokens.weight", {s.vocabSize, d});
    w.finalNorm = r.rmsNorm("norm", d);
    for (int i = 0; i < s.layers; ++i) {
        const std::string l = "layers." + std::to_string(i) + ".";
        HostLayer layer;
        layer.attentionNorm = r.rmsNorm(l + "input_layernorm", d);
        layer.query = r.linear(l + "self_attn.q_proj", qd, d, qkvBias);
        layer.key = r.linear(l + "self_attn.k_proj", kvd, d, qkvBias);
        layer.value = r.linear(l + "self_attn.v_proj", kvd, d, qkvBias);
        // Why: Qwen2 has q/k/v biases but none on o_proj; Llama's attention_bias covers o_proj too.
        const bool outputBias = qkvBias && s.architecture != Architecture::Qwen2;
        layer.output = r.linear(l + "self_attn.o_proj", d, qd, outputBias);
        layer.ffnNorm = r.rmsNorm(l + "post_attention_layernorm", d);
        layer.gate = r.linear(l + "mlp.gate_proj", f, d, false);
        layer.up = r.linear(l + "mlp.up_proj", f, d, false);
        layer.down = r.linear(l + "mlp.down_proj", d, f, false);
        w.layers.push_back(std::move(layer));
    }
    return w;
}

HostWeights readArchitecture(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                             std::set<std::string>& read) {
    switch (spec.architecture) {
    case Architecture::Bert:
    case Architecture::Roberta:
        return readEncoder(checkpoint, spec, kBertLayer, read);
    case Architecture::DistilBert:
        return readEncoder(checkpoint, spec, kDistilBertLayer, read);
    case Architecture::Gpt2:
        return readGpt2(checkpoint, spec, read);
    case Architecture::Llama:
    case Architecture::Qwen2:
    case Architecture::Mistral:
        return readLlamaFamily(checkpoint, spec, read);
    case Architecture::Headlight:
        return readZooWeights(checkpoint, spec, read);
    }
    throw io::CheckpointError(checkpoint.folder() + ": unsupported architecture");
}
} // namespace

HostWeights readWeights(const io::Checkpoint& checkpoint, const ModelSpec& spec) {
    std::set<std::string> read;
    HostWeights weights = readArchitecture(checkpoint, spec, read);
    rejectUnexpectedTensors(checkpoint, spec.architecture, weights.prefix, read);
    return weights;
}
} // namespace headlight
