// Forward pass of a BERT-base-sized model (12 layers, hidden 768, 12 heads, FFN 3072; random
// weights) with every attention map captured, at T = 128 and T = 512, on the CPU backend and on
// the Vulkan backend (lavapipe here). The reference measured in the same run is Eigen's GEMM peak
// on the model's largest matrix product; the counters report each pass's effective GFLOP/s.
// tools/bench/compare_pytorch.sh runs this and PyTorch's CPU forward of the same architecture and
// prints the time ratio.
#include "backend/backend.h"
#include "backend/vulkan/context.h"
#include "bert_base.h"
#include "model/transformer.h"

#include <benchmark/benchmark.h>
#include <random>

using namespace headlight;
using namespace headlight::bench;

namespace {

// Multiply-adds ×2 of one BERT forward pass at T tokens (projections, FFN, QKᵀ and PV).
double forwardFlops(const ModelSpec& s, int64_t t) {
    const double d = s.hidden, f = s.intermediate;
    const double perLayer =
        2.0 * t * d * d * 4 + 2.0 * t * d * f * 2 + 2.0 * 2.0 * t * double(t) * d;
    return perLayer * s.layers;
}

void BM_EigenGemmPeak(benchmark::State& state) {
    const int64_t m = state.range(0), k = 768, n = 3072;
    const RowMatrix a = RowMatrix::Random(m, k), b = RowMatrix::Random(n, k);
    RowMatrix c(m, n);
    for (auto _ : state) {
        c.noalias() = a * b.transpose();
        benchmark::DoNotOptimize(c.data());
    }
    state.counters["GFLOP/s"] =
        benchmark::Counter(2.0 * m * k * n, benchmark::Counter::kIsIterationInvariantRate,
                           benchmark::Counter::kIs1000);
}

void runForward(benchmark::State& state, Backend& backend) {
    static const ModelSpec spec = bertBase();
    static const HostWeights weights = randomBertWeights(spec);
    const TransformerModel model(spec, weights, backend);
    const int64_t tokens = state.range(0);
    ModelInput input;
    std::mt19937 rng(7);
    for (int64_t t = 0; t < tokens; ++t)
        input.ids.push_back(int32_t(rng() % uint32_t(spec.vocabSize)));
    CaptureRequest capture; // every layer's probabilities
    std::size_t capturedBytes = 0;
    for (auto _ : state) {
        const Trace trace = model.forward(input, capture);
        capturedBytes = 0;
        for (const LayerTrace& layer : trace.layers)
            capturedBytes += layer.probabilities.size() * sizeof(float);
        benchmark::DoNotOptimize(trace.lastHiddenState.data());
    }
    state.counters["GFLOP/s"] = benchmark::Counter(forwardFlops(spec, tokens),
                                                   benchmark::Counter::kIsIterationInvariantRate,
                                                   benchmark::Counter::kIs1000);
    state.counters["capture_MB"] = double(capturedBytes) / 1e6;
    // The pass's GEMM FLOP count, for the f32 floor tools/bench/compare_pytorch.sh prints.
    state.counters["GEMM_GFLOP"] = forwardFlops(spec, tokens) / 1e9;
}

void BM_BertBaseForwardCpu(benchmark::State& state) {
    auto backend = makeCpuBackend();
    runForward(state, *backend);
}

void BM_BertBaseForwardVulkan(benchmark::State& state) {
    auto backend = makeVulkanBackend(vk::Context::create());
    runForward(state, *backend);
}
} // namespace

BENCHMARK(BM_EigenGemmPeak)->Arg(128)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BertBaseForwardCpu)
    ->Arg(128)
    ->Arg(512)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);
BENCHMARK(BM_BertBaseForwardVulkan)
    ->Arg(128)
    ->Arg(512)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK_MAIN();
