// The f32 GEMM rate this machine reaches (cpu::gemm: OpenBLAS's sgemm where found) on the
// products of the passes tools/bench compares with PyTorch, and on a large square, the shape a
// tuned sgemm runs fastest. A pass's GEMM FLOP count over the best of these rates is its f32
// floor: no f32 pass of that model runs faster on these cores, PyTorch's included (it calls the
// same sgemm). tools/bench/compare_pytorch.sh and compare_llama.sh run this in the same run as
// both passes and print the floor beside them. Each product is out[T, N] = x[T, K] · Wᵀ with
// W [N, K], as a linear layer is stored; {T, K, N}:
//   BERT-base at T = 128 and 512: Q, K, V and O 768 → 768, FFN up 768 → 3072, down 3072 → 768;
//   Llama-3.2-1B-shaped at T = 128: Q and O 2048 → 2048, K and V 2048 → 512, gate and up
//   2048 → 8192, down 8192 → 2048;
//   a square 2048 × 2048 × 2048.
#include "backend/cpu/cpu_gemm.h"
#include "tensor/tensor.h"

#include <benchmark/benchmark.h>

using namespace headlight;

namespace {

void BM_GemmFloor(benchmark::State& state) {
    const int64_t t = state.range(0), k = state.range(1), n = state.range(2);
    const RowMatrix x = RowMatrix::Random(t, k), w = RowMatrix::Random(n, k);
    RowMatrix out(t, n);
    for (auto _ : state) {
        cpu::gemm(x.data(), w.data(), out.data(), t, k, n, true, 1.0f);
        benchmark::DoNotOptimize(out.data());
    }
    state.counters["GFLOP/s"] = benchmark::Counter(2.0 * double(t) * double(k) * double(n),
                                                   benchmark::Counter::kIsIterationInvariantRate,
                                                   benchmark::Counter::kIs1000);
    state.SetLabel(cpu::gemmLibrary());
}

void shapes(benchmark::internal::Benchmark* b) {
    for (int64_t t : {128, 512})
        for (auto [k, n] : {std::pair<int64_t, int64_t>{768, 768}, {768, 3072}, {3072, 768}})
            b->Args({t, k, n});
    for (auto [k, n] :
         {std::pair<int64_t, int64_t>{2048, 2048}, {2048, 512}, {2048, 8192}, {8192, 2048}})
        b->Args({128, k, n});
    b->Args({2048, 2048, 2048});
}
} // namespace

BENCHMARK(BM_GemmFloor)->Apply(shapes)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
BENCHMARK_MAIN();
