// The CPU backend's GEMM (cpu::gemm: OpenBLAS where found) against Eigen's own GEMM, the
// reference measured in the same run, and the GEMM on weights kept in BF16 or F16 (cpu::gemmStored,
// panels widened while it runs) against the f32 GEMM, its ratio measured in the same benchmark, on
// the shapes that decide a real model's forward pass: a Llama-3.2-1B-shaped layer at T = 128
// (hidden 2048, 8 KV heads of 64, FFN 8192) and a BERT-base layer (hidden 768, FFN 3072). Each is
// out[T, N] = x[T, K] · Wᵀ with W [N, K], as a linear layer is stored. tools/bench/compare_gemm.sh
// adds PyTorch's matmul on the same shapes and prints the ratios.
#include "backend/cpu/cpu_gemm.h"
#include "tensor/tensor.h"

#include <Eigen/Core>
#include <benchmark/benchmark.h>
#include <chrono>

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

// Seconds per call of `run`: the mean of `calls` calls after one warm-up call.
template <typename Run> double secondsPerCall(Run run, int calls) {
    run();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
        run();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / calls;
}

// range(3): 0 BF16, 1 F16. Counter vs_f32: the stored GEMM's rate over the f32 GEMM's on the
// same operands, timed back to back after the benchmark loop.
void BM_StoredGemm(benchmark::State& state) {
    Operands o(state.range(0), state.range(1), state.range(2));
    const bool bf16 = state.range(3) == 0;
    std::vector<uint16_t> bits(std::size_t(o.w.size()));
    for (std::size_t i = 0; i < bits.size(); ++i) {
        const float v = o.w.data()[i];
        bits[i] = bf16 ? Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(v))
                       : Eigen::numext::bit_cast<uint16_t>(Eigen::half(v));
    }
    const io::StoredMatrix w{bf16 ? io::DType::BF16 : io::DType::F16,
                             reinterpret_cast<const std::byte*>(bits.data()), o.w.rows(),
                             o.w.cols(), nullptr};
    const auto stored = [&] { cpu::gemmStored(o.x.data(), w, o.out.data(), o.x.rows()); };
    const auto f32 = [&] {
        cpu::gemm(o.x.data(), o.w.data(), o.out.data(), o.x.rows(), o.x.cols(), o.w.rows(), true,
                  1.0f);
    };
    for (auto _ : state) {
        stored();
        benchmark::DoNotOptimize(o.out.data());
    }
    setRate(state);
    const int calls = 10;
    state.counters["vs_f32"] = secondsPerCall(f32, calls) / secondsPerCall(stored, calls);
    state.SetLabel(std::string(bf16 ? "BF16 " : "F16 ") + cpu::gemmLibrary());
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
BENCHMARK(BM_StoredGemm)
    ->Apply([](benchmark::internal::Benchmark* b) {
        for (int64_t dtype : {0, 1})
            for (auto shape : {std::vector<int64_t>{128, 2048, 2048},
                               {128, 2048, 512},
                               {128, 2048, 8192},
                               {128, 8192, 2048},
                               {1, 2048, 8192}})
                b->Args({shape[0], shape[1], shape[2], dtype});
    })
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_MAIN();
