#include "model/families/layout_helpers.h"

namespace headlight::families {

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

HostLinear conv1d(const WeightReader& r, const std::string& name, int64_t in, int64_t out) {
    return {transposed(r.get(name + ".weight", {in, out})), r.get(name + ".bias", {out}), {}};
}

namespace {
constexpr const char* kWordEmbeddings = "embeddings.word_embeddings.weight";
constexpr const char* kPositionEmbeddings = "embeddings.position_embeddings.weight";
constexpr const char* kTokenTypeEmbeddings = "embeddings.token_type_embeddings.weight";

// An encoder saved alone or under its task head's "<model_type>." prefix.
std::vector<std::string> encoderPrefixes(const ModelSpec& s) {
    return {"", std::string(architectureName(s.architecture)) + "."};
}
} // namespace

HostWeights readEncoderWeights(const io::Checkpoint& checkpoint, const ModelSpec& s,
                               const EncoderLayerNames& names, std::set<std::string>& read) {
    const WeightReader r = readerFor(checkpoint, encoderPrefixes(s), kWordEmbeddings, read);
    const int64_t d = s.hidden, f = s.intermediate;
    HostWeights w;
    w.prefix = r.prefix();
    w.tokenEmbedding = r.get(kWordEmbeddings, {s.vocabSize, d});
    w.positionEmbedding = r.get(kPositionEmbeddings, {s.maxPositions, d});
    if (s.typeVocabSize > 0)
        w.tokenTypeEmbedding = r.get(kTokenTypeEmbeddings, {s.typeVocabSize, d});
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

std::vector<std::string> encoderEmbeddingTables(const io::Checkpoint& checkpoint,
                                                const ModelSpec& s) {
    for (const std::string& prefix : encoderPrefixes(s)) {
        if (!checkpoint.contains(prefix + kWordEmbeddings)) continue;
        std::vector<std::string> tables{prefix + kWordEmbeddings, prefix + kPositionEmbeddings};
        if (s.typeVocabSize > 0) tables.push_back(prefix + kTokenTypeEmbeddings);
        return tables;
    }
    return {};
}

namespace {
// `outputBias`: whether o_proj carries a bias when the q/k/v projections do.
HostWeights readLlamaLayout(const io::Checkpoint& checkpoint, const ModelSpec& s, bool outputBias,
                            std::set<std::string>& read) {
    const WeightReader r = readerFor(checkpoint, {"model.", ""}, "embed_tokens.weight", read);
    const int64_t d = s.hidden, f = s.intermediate, qd = int64_t(s.heads) * s.headDim,
                  kvd = int64_t(s.kvHeads) * s.headDim;
    const bool qkvBias = s.attentionBias;
    HostWeights w;
    w.prefix = r.prefix();
    w.tokenEmbeddingStored = r.mapped("embed_tokens.weight", {s.vocabSize, d});
    if (!w.tokenEmbeddingStored.valid())
        w.tokenEmbedding = r.get("embed_tokens.weight", {s.vocabSize, d});
    w.finalNorm = r.rmsNorm("norm", d);
    for (int i = 0; i < s.layers; ++i) {
        const std::string l = "layers." + std::to_string(i) + ".";
        HostLayer layer;
        layer.attentionNorm = r.rmsNorm(l + "input_layernorm", d);
        layer.query = r.linear(l + "self_attn.q_proj", qd, d, qkvBias);
        layer.key = r.linear(l + "self_attn.k_proj", kvd, d, qkvBias);
        layer.value = r.linear(l + "self_attn.v_proj", kvd, d, qkvBias);
        layer.output = r.linear(l + "self_attn.o_proj", d, qd, qkvBias && outputBias);
        if (s.qkNorm) {
            layer.queryNorm = r.rmsNorm(l + "self_attn.q_norm", s.headDim);
            layer.keyNorm = r.rmsNorm(l + "self_attn.k_norm", s.headDim);
        }
        layer.ffnNorm = r.rmsNorm(l + "post_attention_layernorm", d);
        layer.gate = r.linear(l + "mlp.gate_proj", f, d, false);
        layer.up = r.linear(l + "mlp.up_proj", f, d, false);
        layer.down = r.linear(l + "mlp.down_proj", d, f, false);
        w.layers.push_back(std::move(layer));
    }
    return w;
}
} // namespace

HostWeights readLlamaWeights(const io::Checkpoint& checkpoint, const ModelSpec& s,
                             std::set<std::string>& read) {
    return readLlamaLayout(checkpoint, s, true, read);
}

HostWeights readQwen2Weights(const io::Checkpoint& checkpoint, const ModelSpec& s,
                             std::set<std::string>& read) {
    return readLlamaLayout(checkpoint, s, false, read);
}
} // namespace headlight::families
