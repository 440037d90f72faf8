#pragma once
// Real-size Llama checkpoints without real data: Llama-3.1-8B- and Llama-3.2-1B-shaped BF16
// safetensors shards whose data is a hole (the file is extended, nothing is written), with
// config.json and model.safetensors.index.json. All-zero weights make every hidden state zero and
// every attention row uniform over the keys a causal query sees.
//
// With `Fill::RandomAttention` the attention is given something to look at while the file stays
// mostly a hole: every norm is 1, every layer's q, k, v and o projections hold small random
// values (xorshift, a fixed seed), and so do the embedding rows of the first kRandomLowRows ids
// and of the last kRandomHighRows (past any small test tokenizer's vocabulary, as a padded
// vocabulary is). The MLPs stay zero, so each layer adds only its attention to the residual.
// 1B: 336 MB written of 2.5 GB; 8B: 2.7 GB of 16 GB.
#include "temp_files.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace headlight::test {

struct LlamaShape {
    int64_t vocab, hidden, intermediate, layers, heads, kvHeads;
    bool tied;
    int64_t headDim() const { return hidden / heads; }
};
constexpr LlamaShape kLlama8B{128256, 4096, 14336, 32, 32, 8, false};
constexpr LlamaShape kLlama1B{128256, 2048, 8192, 16, 32, 8, true};

using TensorShape = std::vector<int64_t>;
using NamedShape = std::pair<QString, TensorShape>;

inline std::vector<NamedShape> llamaTensors(const LlamaShape& s) {
    const int64_t d = s.hidden, f = s.intermediate, kv = s.kvHeads * s.headDim();
    std::vector<NamedShape> tensors{{"model.embed_tokens.weight", {s.vocab, d}}};
    for (int64_t l = 0; l < s.layers; ++l) {
        const QString p = QString("model.layers.%1.").arg(l);
        tensors.insert(tensors.end(), {{p + "input_layernorm.weight", {d}},
                                       {p + "post_attention_layernorm.weight", {d}},
                                       {p + "self_attn.q_proj.weight", {d, d}},
                                       {p + "self_attn.k_proj.weight", {kv, d}},
                                       {p + "self_attn.v_proj.weight", {kv, d}},
                                       {p + "self_attn.o_proj.weight", {d, d}},
                                       {p + "mlp.gate_proj.weight", {f, d}},
                                       {p + "mlp.up_proj.weight", {f, d}},
                                       {p + "mlp.down_proj.weight", {d, f}}});
    }
    tensors.push_back({"model.norm.weight", {d}});
    if (!s.tied) tensors.push_back({"lm_head.weight", {s.vocab, d}});
    return tensors;
}

inline int64_t elementsOf(const TensorShape& shape) {
    int64_t n = 1;
    for (int64_t d : shape)
        n *= d;
    return n;
}

enum class Fill { Zero, RandomAttention };
constexpr int64_t kRandomLowRows = 1024, kRandomHighRows = 256;

namespace sparse_llama {

// BF16 bits of `count` values: 1.0 for a norm, else uniform in ±scale.
inline QByteArray bf16Values(int64_t count, bool norm, float scale, uint64_t& state) {
    QByteArray bytes(count * 2, Qt::Uninitialized);
    for (int64_t i = 0; i < count; ++i) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        const float unit = float(state >> 40) / float(1 << 24) * 2.0f - 1.0f; // [-1, 1)
        const float v = norm ? 1.0f : unit * scale;
        uint32_t f;
        std::memcpy(&f, &v, 4);
        const auto b = uint16_t(f >> 16);
        std::memcpy(bytes.data() + 2 * i, &b, 2);
    }
    return bytes;
}

// The [first, first + rows) row ranges of `name` that RandomAttention fills (all rows: {0, all}).
inline std::vector<std::pair<int64_t, int64_t>> randomRows(const QString& name,
                                                           const TensorShape& shape) {
    if (shape.size() == 1 || name.contains(".self_attn.")) return {{0, shape[0]}};
    if (name == "model.embed_tokens.weight" || name == "lm_head.weight")
        return {{0, kRandomLowRows}, {shape[0] - kRandomHighRows, kRandomHighRows}};
    return {};
}

inline void writeAt(QFile& file, qint64 at, const QByteArray& bytes) {
    if (!file.seek(at) || file.write(bytes) != bytes.size())
        qFatal("cannot write the test file %s", qPrintable(file.fileName()));
}

// One shard: the header, padded to 8 bytes, then a hole as long as the BF16 data, into which
// RandomAttention writes its rows.
inline void writeShard(const QString& path, const std::vector<NamedShape>& tensors, Fill fill,
                       uint64_t& state) {
    QJsonObject header;
    int64_t offset = 0;
    for (const auto& [name, shape] : tensors) {
        QJsonArray dims;
        for (int64_t d : shape)
            dims.append(double(d));
        const int64_t end = offset + elementsOf(shape) * 2;
        header[name] = QJsonObject{{"dtype", "BF16"},
                                   {"shape", dims},
                                   {"data_offsets", QJsonArray{double(offset), double(end)}}};
        offset = end;
    }
    QByteArray json = QJsonDocument(header).toJson(QJsonDocument::Compact);
    json.append(QByteArray((8 - json.size() % 8) % 8, ' '));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(littleEndian64(quint64(json.size())) + json) != 8 + json.size() ||
        !file.resize(8 + json.size() + offset)) // ftruncate: the data is a hole
        qFatal("cannot write the test file %s", qPrintable(path));
    if (fill == Fill::Zero) return;
    int64_t start = 8 + json.size();
    for (const auto& [name, shape] : tensors) {
        const int64_t cols = shape.size() == 1 ? 1 : shape[1];
        // Why these scales: with RMS-normed inputs, q and k entries have a standard deviation of
        // 1.5, so the scores q·k/√d_head spread over a few units and the maps are neither flat
        // nor one-hot; unit embedding rows give logits of ±√d_model·0.6, so the logit lens
        // picks a token instead of spreading over the vocabulary.
        const bool table = name == "model.embed_tokens.weight" || name == "lm_head.weight";
        const float scale = table ? 1.0f : 1.5f * std::sqrt(3.0f / float(cols));
        for (const auto& [first, rows] : randomRows(name, shape))
            writeAt(file, start + first * cols * 2,
                    bf16Values(rows * cols, shape.size() == 1, scale, state));
        start += elementsOf(shape) * 2;
    }
}
} // namespace sparse_llama

// config.json and `shards` shards with their index, in `folder`.
inline void writeSparseLlama(const QString& folder, const LlamaShape& s, int shards,
                             Fill fill = Fill::Zero) {
    const QJsonObject config{{"architectures", QJsonArray{"LlamaForCausalLM"}},
                             {"model_type", "llama"},
                             {"vocab_size", double(s.vocab)},
                             {"hidden_size", double(s.hidden)},
                             {"intermediate_size", double(s.intermediate)},
                             {"num_hidden_layers", double(s.layers)},
                             {"num_attention_heads", double(s.heads)},
                             {"num_key_value_heads", double(s.kvHeads)},
                             {"max_position_embeddings", 131072},
                             {"rms_norm_eps", 1e-5},
                             {"rope_theta", 500000.0},
                             {"hidden_act", "silu"},
                             {"tie_word_embeddings", s.tied},
                             {"torch_dtype", "bfloat16"}};
    writeFile(folder + "/config.json", QJsonDocument(config).toJson());
    const std::vector<NamedShape> tensors = llamaTensors(s);
    QJsonObject weightMap;
    const std::size_t perShard = (tensors.size() + std::size_t(shards) - 1) / std::size_t(shards);
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < shards; ++i) {
        const QString shard = QString("model-%1-of-%2.safetensors")
                                  .arg(i + 1, 5, 10, QChar('0'))
                                  .arg(shards, 5, 10, QChar('0'));
        const auto first =
            tensors.begin() + std::ptrdiff_t(std::min(tensors.size(), perShard * std::size_t(i)));
        const auto last = tensors.begin() +
                          std::ptrdiff_t(std::min(tensors.size(), perShard * std::size_t(i + 1)));
        sparse_llama::writeShard(folder + "/" + shard, {first, last}, fill, state);
        for (auto at = first; at != last; ++at)
            weightMap[at->first] = shard;
    }
    writeFile(folder + "/model.safetensors.index.json",
              QJsonDocument(QJsonObject{{"weight_map", weightMap}}).toJson());
}

// The same in a new folder of `scratch`.
inline QString writeSparseLlama(ScratchDir& scratch, const LlamaShape& s, int shards,
                                Fill fill = Fill::Zero) {
    const QString folder = scratch.freshFolder();
    writeSparseLlama(folder, s, shards, fill);
    return folder;
}
} // namespace headlight::test
