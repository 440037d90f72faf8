// Incremental recompute (model/kv_cache.h) on a Llama-shaped random model (6 layers, hidden 512,
// 8 query and 2 key/value heads, SwiGLU FFN 1408, RoPE, RMSNorm, vocabulary 4096; CPU backend),
// all measured in one run and reported as ratios:
//   decode_ms  one decode step: T = 1 new token over a 1,000-token cache, nothing captured but
//              the last hidden state (what a generation loop pays per token);
//   append_ms  the same token appended through forwardCached with what the LM-head views ask
//              (logits [T, V] and the variants' internals; the trace holds all 1,001 rows);
//   full_ms    the full 1,001-token pass with that capture;
//   maps_append_ms / maps_full_ms  the same with every attention map captured [L, H, T, T];
//   toggle_reuse_ms / toggle_full_ms  a knockout toggled in the last layer with the layers
//              before it reused, and without.
// Each time is the median of several runs. BM_AppendToken times the append alone, one per
// iteration (/0: the decode step's capture, /1: the LM-head views'), so that a profiler run with
// --benchmark_filter=BM_AppendToken sees nothing else.
#include "llama_1b.h"
#include "model/transformer.h"

#include <algorithm>
#include <benchmark/benchmark.h>
#include <chrono>
#include <functional>
#include <random>

using namespace headlight;
using namespace headlight::bench;

namespace {

constexpr int64_t kTokens = 1000;
constexpr int kRuns = 5;

// 6 layers, hidden 512, 8 query and 2 key/value heads, SwiGLU FFN 1408, vocabulary 4096.
ModelSpec kvCacheModel() {
    return llamaShaped({4096, 512, 6, 8, 2, 1408, 4096, 1e-6f});
}

// kTokens + 1 ids: the input, and the token appended to it.
std::vector<int32_t> randomIds(const ModelSpec& spec) {
    std::mt19937 rng(7);
    std::vector<int32_t> ids;
    for (int64_t t = 0; t <= kTokens; ++t)
        ids.push_back(int32_t(rng() % uint32_t(spec.vocabSize)));
    return ids;
}

ModelInput firstTokens(const std::vector<int32_t>& ids, int64_t count) {
    ModelInput input;
    input.ids.assign(ids.begin(), ids.begin() + count);
    return input;
}

// The median of kRuns timings of `run`, each after `prepare` (untimed).
double medianMs(const std::function<void()>& prepare, const std::function<void()>& run) {
    std::vector<double> ms;
    for (int i = 0; i < kRuns; ++i) {
        prepare();
        const auto start = std::chrono::steady_clock::now();
        run();
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

void BM_IncrementalRecompute(benchmark::State& state) {
    const std::unique_ptr<Backend> backend = makeCpuBackend();
    const ModelSpec spec = kvCacheModel();
    const TransformerModel model(spec, llamaWeights(spec, io::DType::F32), *backend);
    const std::vector<int32_t> ids = randomIds(spec);
    const ModelInput prefix = firstTokens(ids, kTokens), appended = firstTokens(ids, kTokens + 1);
    CaptureRequest nothing;
    nothing.probabilities = false;
    CaptureRequest lmViews = nothing;
    lmViews.logits = true;
    lmViews.internals = true;
    const CaptureRequest maps; // every layer's probabilities
    KvCache cache;
    const auto cached = [&](const CaptureRequest& capture) {
        return [&] {
            cache.clear();
            model.forwardCached(cache, prefix, capture);
        };
    };
    const auto append = [&](const CaptureRequest& capture) {
        return [&] {
            benchmark::DoNotOptimize(
                model.forwardCached(cache, appended, capture).lastHiddenState.data());
        };
    };
    const auto full = [&](const CaptureRequest& capture) {
        return [&] {
            benchmark::DoNotOptimize(model.forward(appended, capture).lastHiddenState.data());
        };
    };
    const variants::Intervention knockout{
        {{{spec.layers - 1, 3, variants::AblationMode::Zero}, {}}}, {}};
    for (auto _ : state) {
        const double decode = medianMs(cached(nothing), append(nothing));
        const double appendMs = medianMs(cached(lmViews), append(lmViews));
        const double fullMs = medianMs([] {}, full(lmViews));
        const double mapsAppend = medianMs(cached(maps), append(maps));
        const double mapsFull = medianMs([] {}, full(maps));
        const double toggleReuse = medianMs(
            [&] {
                cache.clear();
                model.forwardCached(cache, appended, lmViews);
            },
            [&] { model.forwardCached(cache, appended, lmViews, {}, knockout); });
        const double toggleFull =
            medianMs([] {}, [&] { model.forward(appended, lmViews, {}, knockout); });
        state.counters["decode_ms"] = decode;
        state.counters["append_ms"] = appendMs;
        state.counters["full_ms"] = fullMs;
        state.counters["append_over_decode"] = appendMs / decode;
        state.counters["full_over_append"] = fullMs / appendMs;
        state.counters["maps_append_ms"] = mapsAppend;
        state.counters["maps_full_ms"] = mapsFull;
        state.counters["maps_full_over_append"] = mapsFull / mapsAppend;
        state.counters["toggle_reuse_ms"] = toggleReuse;
        state.counters["toggle_full_ms"] = toggleFull;
        state.counters["toggle_full_over_reuse"] = toggleFull / toggleReuse;
    }
}

// Each iteration appends another 1,001st token (one the cache does not hold), so that every
// request reuses the 1,000 positions of a kept pass and computes one.
void BM_AppendToken(benchmark::State& state) {
    const std::unique_ptr<Backend> backend = makeCpuBackend();
    const ModelSpec spec = kvCacheModel();
    const TransformerModel model(spec, llamaWeights(spec, io::DType::F32), *backend);
    const std::vector<int32_t> ids = randomIds(spec);
    ModelInput appended = firstTokens(ids, kTokens + 1);
    CaptureRequest capture;
    capture.probabilities = false;
    capture.logits = state.range(0) == 1;
    capture.internals = state.range(0) == 1;
    KvCache cache;
    model.forwardCached(cache, firstTokens(ids, kTokens), capture);
    for (auto _ : state) {
        appended.ids.back() = (appended.ids.back() + 1) % int32_t(spec.vocabSize);
        benchmark::DoNotOptimize(
            model.forwardCached(cache, appended, capture).lastHiddenState.data());
    }
}
} // namespace

BENCHMARK(BM_AppendToken)->Arg(0)->Arg(1)->MinTime(2.0)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_IncrementalRecompute)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
