// Forward pass of a Llama-3.2-1B-shaped model (16 layers, hidden 2048, 32 query and 8 key/value
// heads of 64, SwiGLU FFN 8192, RoPE θ = 500,000, RMSNorm; random weights) at T = 128 on the CPU
// backend, its weights kept as a checkpoint would store them: f32 (read in place) and BF16
// (widened a panel at a time by the GEMM). Nothing is captured but the last hidden state, and the
// 128k-entry LM head is left out (a 1,024-entry table feeds the embeddings), as
// tools/bench/torch_llama_forward.py leaves it out; tools/bench/compare_llama.sh runs both and
// prints the time ratios against PyTorch in float32 and bfloat16. Counter GFLOP/s: the pass's
// multiply-adds ×2 (projections, FFN, and the causal half of QKᵀ and PV) per second. The CPU time
// is the process's, all threads, as the PyTorch script's is: on a loaded machine, where waiting
// for a core inflates wall time, the CPU-time ratio is the one to read.
#include "llama_1b.h"
#include "model/transformer.h"

#include <Eigen/Core>
#include <benchmark/benchmark.h>
#include <memory>
#include <random>

using namespace headlight;
using namespace headlight::bench;

namespace {

// range(0): tokens; range(1): 0 f32 weights, 1 BF16 weights.
void BM_Llama1BForwardCpu(benchmark::State& state) {
    const ModelSpec spec = llama1B();
    const io::DType dtype = state.range(1) == 1 ? io::DType::BF16 : io::DType::F32;
    const auto backend = makeCpuBackend();
    const TransformerModel model(spec, llamaWeights(spec, dtype), *backend);
    ModelInput input;
    std::mt19937 rng(7);
    for (int64_t t = 0; t < state.range(0); ++t)
        input.ids.push_back(int32_t(rng() % uint32_t(spec.vocabSize)));
    CaptureRequest nothing;
    nothing.probabilities = false;
    for (auto _ : state)
        benchmark::DoNotOptimize(model.forward(input, nothing).lastHiddenState.data());
    state.counters["GFLOP/s"] = benchmark::Counter(forwardFlops(spec, state.range(0)),
                                                   benchmark::Counter::kIsIterationInvariantRate,
                                                   benchmark::Counter::kIs1000);
    // The pass's GEMM FLOP count, for the f32 floor tools/bench/compare_llama.sh prints.
    state.counters["GEMM_GFLOP"] = forwardFlops(spec, state.range(0)) / 1e9;
    state.SetLabel(dtype == io::DType::BF16 ? "bf16" : "f32");
}
} // namespace

BENCHMARK(BM_Llama1BForwardCpu)
    ->Args({128, 0})
    ->Args({128, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->MinTime(5.0);
BENCHMARK_MAIN();
