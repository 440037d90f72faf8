// Peak resident memory of a Llama-3.1-8B-shaped BF16 checkpoint (random weights, 16 GB written to
// disk in four shards with model.safetensors.index.json, then deleted) running one T = 512 pass
// on the CPU backend, against its memory plan (planMemory: the mapped weights, the widened ones
// and the pass's activations). Goal (issue 19): peak RSS ≤ 1.15 × the plan. Not a test: it
// needs 16 GB of disk and minutes. The folder is HEADLIGHT_BENCH_DIR (default /tmp), plus
// "/headlight-8b-bf16"; the RSS of this process before the load is subtracted from the peak.
#include "io/checkpoint.h"
#include "model/memory_budget.h"
#include "model/transformer.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <benchmark/benchmark.h>
#include <cstdlib>
#include <sys/resource.h>

using namespace headlight;

namespace {

constexpr int64_t kVocab = 128256, kHidden = 4096, kFfn = 14336, kLayers = 32, kHeads = 32,
                  kKvHeads = 8, kTokens = 512, kShards = 4;

using Named = std::pair<QString, std::vector<int64_t>>;

std::vector<Named> tensorsOf8B() {
    const int64_t d = kHidden, kv = kKvHeads * (kHidden / kHeads);
    std::vector<Named> t{{"model.embed_tokens.weight", {kVocab, d}}};
    for (int64_t l = 0; l < kLayers; ++l) {
        const QString p = QString("model.layers.%1.").arg(l);
        t.insert(t.end(), {{p + "input_layernorm.weight", {d}},
                           {p + "post_attention_layernorm.weight", {d}},
                           {p + "self_attn.q_proj.weight", {d, d}},
                           {p + "self_attn.k_proj.weight", {kv, d}},
                           {p + "self_attn.v_proj.weight", {kv, d}},
                           {p + "self_attn.o_proj.weight", {d, d}},
                           {p + "mlp.gate_proj.weight", {kFfn, d}},
                           {p + "mlp.up_proj.weight", {kFfn, d}},
                           {p + "mlp.down_proj.weight", {d, kFfn}}});
    }
    t.push_back({"model.norm.weight", {d}});
    t.push_back({"lm_head.weight", {kVocab, d}});
    return t;
}

// BF16 bits of small random values (xorshift; uniform in ±2^-6 for matrices, near 1 for norms).
void fillRandom(std::vector<uint16_t>& bits, uint64_t& state, bool norm) {
    for (uint16_t& b : bits) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        const float unit = float(state >> 40) / float(1 << 24) - 0.5f; // [-0.5, 0.5)
        const float v = norm ? 1.0f + 0.1f * unit : unit / 32.0f;
        uint32_t f;
        std::memcpy(&f, &v, 4);
        b = uint16_t(f >> 16);
    }
}

void writeShard(const QString& path, const std::vector<Named>& tensors, uint64_t& state) {
    QJsonObject header;
    int64_t offset = 0;
    for (const auto& [name, shape] : tensors) {
        QJsonArray dims;
        int64_t n = 1;
        for (int64_t d : shape)
            dims.append(double(d)), n *= d;
        header[name] =
            QJsonObject{{"dtype", "BF16"},
                        {"shape", dims},
                        {"data_offsets", QJsonArray{double(offset), double(offset + 2 * n)}}};
        offset += 2 * n;
    }
    QByteArray json = QJsonDocument(header).toJson(QJsonDocument::Compact);
    json.append(QByteArray((8 - json.size() % 8) % 8, ' '));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        throw std::runtime_error("cannot write " + path.toStdString());
    const uint64_t length = uint64_t(json.size());
    file.write(reinterpret_cast<const char*>(&length), 8);
    file.write(json);
    std::vector<uint16_t> chunk;
    for (const auto& [name, shape] : tensors) {
        int64_t left = 1;
        for (int64_t d : shape)
            left *= d;
        while (left > 0) {
            chunk.resize(std::size_t(std::min<int64_t>(left, 1 << 24)));
            fillRandom(chunk, state, shape.size() == 1);
            if (file.write(reinterpret_cast<const char*>(chunk.data()), qint64(chunk.size() * 2)) !=
                qint64(chunk.size() * 2))
                throw std::runtime_error("disk full writing " + path.toStdString());
            left -= int64_t(chunk.size());
        }
    }
}

void write8B(const QString& folder) {
    QDir().mkpath(folder);
    const QJsonObject config{{"architectures", QJsonArray{"LlamaForCausalLM"}},
                             {"model_type", "llama"},
                             {"vocab_size", double(kVocab)},
                             {"hidden_size", double(kHidden)},
                             {"intermediate_size", double(kFfn)},
                             {"num_hidden_layers", double(kLayers)},
                             {"num_attention_heads", double(kHeads)},
                             {"num_key_value_heads", double(kKvHeads)},
                             {"max_position_embeddings", 131072},
                             {"rms_norm_eps", 1e-5},
                             {"rope_theta", 500000.0},
                             {"hidden_act", "silu"},
                             {"tie_word_embeddings", false}};
    QFile configFile(folder + "/config.json");
    configFile.open(QIODevice::WriteOnly);
    configFile.write(QJsonDocument(config).toJson());
    const std::vector<Named> tensors = tensorsOf8B();
    const std::size_t perShard = (tensors.size() + kShards - 1) / kShards;
    QJsonObject weightMap;
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (int64_t i = 0; i < kShards; ++i) {
        const QString shard = QString("model-%1-of-%2.safetensors")
                                  .arg(i + 1, 5, 10, QChar('0'))
                                  .arg(kShards, 5, 10, QChar('0'));
        const std::size_t first = std::min(tensors.size(), perShard * std::size_t(i));
        const std::size_t last = std::min(tensors.size(), perShard * std::size_t(i + 1));
        const std::vector<Named> part(tensors.begin() + std::ptrdiff_t(first),
                                      tensors.begin() + std::ptrdiff_t(last));
        writeShard(folder + "/" + shard, part, state);
        for (const auto& [name, shape] : part)
            weightMap[name] = shard;
    }
    QFile index(folder + "/model.safetensors.index.json");
    index.open(QIODevice::WriteOnly);
    index.write(QJsonDocument(QJsonObject{{"weight_map", weightMap}}).toJson());
}

double peakRssBytes() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_maxrss) * 1024.0;
}

void BM_Llama8BPeakRss(benchmark::State& state) {
    const char* base = std::getenv("HEADLIGHT_BENCH_DIR");
    const QString folder = QString(base ? base : "/tmp") + "/headlight-8b-bf16";
    write8B(folder);
    const double before = peakRssBytes();
    const MemoryPlan plan =
        planMemory(io::Checkpoint(folder.toStdString()), loadModelConfig(folder.toStdString()),
                   kTokens, CaptureRequest{}, true);
    const auto backend = makeCpuBackend();
    double forwardMs = 0.0;
    for (auto _ : state) {
        const auto model = loadModel(folder.toStdString(), *backend);
        ModelInput input;
        for (int64_t t = 0; t < kTokens; ++t)
            input.ids.push_back(int32_t((t * 7919) % kVocab));
        const Trace trace = model->forward(input);
        forwardMs = trace.forwardMs;
        benchmark::DoNotOptimize(trace.layers.data());
    }
    const double peak = peakRssBytes() - before;
    state.counters["peak_rss_GB"] = peak / 1e9;
    state.counters["plan_GB"] = plan.peak() / 1e9;
    state.counters["mapped_GB"] = plan.weights.mapped / 1e9;
    state.counters["rss_over_plan"] = peak / plan.peak();
    state.counters["forward_s"] = forwardMs / 1e3;
    QDir(folder).removeRecursively();
}
} // namespace

BENCHMARK(BM_Llama8BPeakRss)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK_MAIN();
