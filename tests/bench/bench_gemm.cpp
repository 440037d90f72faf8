// The CPU backend's GEMM (cpu::gemm: OpenBLAS where found) against Eigen's own GEMM, the
// reference measured in the same run, on the shapes that decide a real model's forward pass:
// a Llama-3.2-1B-shaped layer at T = 128 (hidden 2048, 8 KV heads of 64, FFN 8192) and a
// BERT-base layer (hidden 768, FFN 3072). Each is out[T, N] = x[T, K] · Wᵀ with W [N, K], as a
// linear layer is stored. tools/bench/compare_gemm.sh adds PyTorch's matmul on the same shapes
// and prints the ratios.
#include "backend/cpu/cpu_gemm.h"
#include "tensor/tensor.h"

#include <benchmark/benchmark.h>

using namespace headlight;

namespace {

struct Operands {
    RowMatrix x, w, out;
    Operands(int64_t t, int64_t k, int64_t n)
        : x(RowMatrix::Random(t, k))
        , w(RowMatrix::Random(n, k))
        , out(t, n) {}
};

void setRate(benchmark::State& state) {
    const double flops =
        2.0 * double(state.range(0)) * double(state.range(1)) * double(state.range(2));
    state.counters["GFLOP/s"] = benchmark::Counter(
        flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
    state.SetLabel(cpu::gemmLibrary());
}

void BM_HeadlightGemm(benchmark::State& state) {
    Operands o(state.range(0), state.range(1), state.range(2));
    for (auto _ : state) {
        cpu::gemm(o.x.data(), o.w.data(), o.out.data(), o.x.rows(), o.x.cols(), o.w.rows(), true,
                  1.0f);
        benchmark::DoNotOptimize(o.out.data());
    }
    setRate(state);
}

void BM_EigenGemm(benchmark::State& state) {
    Operands o(state.range(0), state.range(1), state.range(2));
    for (auto _ : state) {
        o.out.noalias() = o.x * o.w.transpose();
        benchmark::DoNotOptimize(o.out.data());
    }
    setRate(state);
    state.SetLabel("Eigen");
}

// {T, K, N}: Llama-1B q/o projection, k/v projection, gate/up, down; BERT-base up and down.
void shapes(benchmark::internal::Benchmark* b) {
    for (auto shape : {std::vector<int64_t>{128, 2048, 2048},
                       {128, 2048, 512},
                       {128, 2048, 8192},
                       {128, 8192, 2048},
                       {128, 768, 3072},
                       {512, 3072, 768}})
        b->Args(shape);
}
} // namespace

BENCHMARK(BM_HeadlightGemm)->Apply(shapes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_EigenGemm)->Apply(shapes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
