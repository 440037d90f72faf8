// What a long text costs the views' statistics (issue 19 §2): the zoo's RoPE model at T = 4,096
// on the CPU backend, the dense path (every [H, T, T] map kept, then entropy, adjacent-layer JSD,
// sparsity and one rollout row from them) against the streamed one (each layer's queries and
// keys kept, the same statistics streamed over rebuilt rows, analysis/streamed_attention.h). Run
// each alone (--benchmark_filter=Dense or =Streamed) so that peak_rss_MiB is its own; the
// counter seconds is the pass and the statistics together.
#include "analysis/divergence.h"
#include "analysis/sparsity.h"
#include "analysis/streamed_attention.h"
#include "backend/backend.h"
#include "model/transformer.h"

#include <benchmark/benchmark.h>
#include <chrono>
#include <sys/resource.h>

using namespace headlight;
using namespace headlight::analysis;

namespace {

double peakRssMiB() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_maxrss) / 1024.0;
}

ModelInput textOf(int64_t tokens) {
    ModelInput input;
    for (int64_t t = 0; t < tokens; ++t)
        input.ids.push_back(int32_t(5 + (t * 37) % 250));
    return input;
}

template <typename Run> void measure(benchmark::State& state, Run run) {
    double seconds = 0.0;
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        run();
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    state.counters["seconds"] = seconds;
    state.counters["peak_rss_MiB"] = peakRssMiB();
}

void BM_Dense(benchmark::State& state) {
    const auto backend = makeCpuBackend();
    const auto model = loadModel(HEADLIGHT_SOURCE_DIR "/resources/models/rope", *backend);
    measure(state, [&] {
        const Trace trace = model->forward(textOf(state.range(0)));
        const Tensor maps = trace.stackedProbabilities();
        benchmark::DoNotOptimize(attentionEntropy(maps, trace.valid));
        benchmark::DoNotOptimize(adjacentLayerJsd(maps, trace.valid));
        benchmark::DoNotOptimize(attentionSparsity(maps, trace.valid));
    });
}

void BM_Streamed(benchmark::State& state) {
    const auto backend = makeCpuBackend();
    const auto model = loadModel(HEADLIGHT_SOURCE_DIR "/resources/models/rope", *backend);
    measure(state, [&] {
        CaptureRequest capture;
        capture.probabilities = false;
        capture.queriesKeys = true;
        const Trace trace = model->forward(textOf(state.range(0)), capture);
        std::vector<AtlasInput> layers;
        for (const LayerTrace& layer : trace.layers)
            layers.push_back(atlasInputOf(layer, model->spec(), trace.valid));
        benchmark::DoNotOptimize(streamedStatistics(layers, trace.valid));
        benchmark::DoNotOptimize(streamedRolloutRow(layers, trace.valid, state.range(0) - 1));
        benchmark::DoNotOptimize(rebuiltMap(layers.back(), AttentionAtlas::kAllHeads));
    });
}
} // namespace

BENCHMARK(BM_Dense)->Arg(4096)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_Streamed)->Arg(4096)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK_MAIN();
