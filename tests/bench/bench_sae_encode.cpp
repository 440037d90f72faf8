// Encoding and decoding 1,024 tokens with a 16,384-wide SAE on a Llama-3.2-1B-shaped model's
// residual stream (d_in 2,048; random weights, standard ReLU and TopK k = 64), against the
// model's own forward pass over the same 1,024 tokens, run first in this process: the counter
// "of_pass" is the SAE's time over the pass's. Counters: GFLOP/s of the encoder and decoder
// GEMMs (2·T·d_in·d_sae each), and the memory the SAE holds (weights) and the encoding makes
// (features [T, d_sae], input and output [T, d_in]) in MiB, f32 throughout.
#include "analysis/sparse_autoencoder.h"
#include "llama_1b.h"

#include <benchmark/benchmark.h>
#include <chrono>
#include <random>

using namespace headlight;
using namespace headlight::bench;

namespace {

constexpr int64_t kTokens = 1024;
constexpr int kSaeWidth = 16384;
constexpr int kTopK = 64;

double passSeconds = 0.0; // BM_Llama1BPass's mean, for the SAE's ratio

Tensor randomTensor(std::vector<int64_t> shape, float scale, uint32_t seed) {
    Tensor t(std::move(shape), 0.0f);
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, scale);
    for (float& v : t.values())
        v = normal(rng);
    return t;
}

analysis::SparseAutoencoder randomSae(int dIn, int dSae, bool topK) {
    analysis::SparseAutoencoder sae;
    sae.architecture = topK ? analysis::SaeArchitecture::TopK : analysis::SaeArchitecture::Standard;
    sae.dIn = dIn;
    sae.dSae = dSae;
    sae.k = kTopK;
    sae.wEnc = randomTensor({dIn, dSae}, 1.0f / std::sqrt(float(dIn)), 1);
    sae.wDec = randomTensor({dSae, dIn}, 1.0f / std::sqrt(float(dSae)), 2);
    sae.bEnc = randomTensor({dSae}, 0.01f, 3);
    sae.bDec = randomTensor({dIn}, 0.01f, 4);
    return sae;
}

void BM_Llama1BPass(benchmark::State& state) {
    const ModelSpec spec = llama1B();
    const auto backend = makeCpuBackend();
    const TransformerModel model(spec, llamaWeights(spec, io::DType::F32), *backend);
    ModelInput input;
    std::mt19937 rng(7);
    for (int64_t t = 0; t < kTokens; ++t)
        input.ids.push_back(int32_t(rng() % uint32_t(spec.vocabSize)));
    CaptureRequest nothing;
    nothing.probabilities = false;
    double total = 0.0;
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(model.forward(input, nothing).lastHiddenState.data());
        total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    passSeconds = total / double(state.iterations());
    state.counters["GFLOP/s"] = benchmark::Counter(forwardFlops(spec, kTokens),
                                                   benchmark::Counter::kIsIterationInvariantRate,
                                                   benchmark::Counter::kIs1000);
}

// range(0): 0 standard ReLU, 1 TopK.
void BM_SaeEncode16k(benchmark::State& state) {
    const int dIn = int(llama1B().hidden);
    const analysis::SparseAutoencoder sae = randomSae(dIn, kSaeWidth, state.range(0) == 1);
    const Tensor activations = randomTensor({kTokens, dIn}, 1.0f, 5);
    double total = 0.0;
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(analysis::encodeAndDecode(sae, activations).features.data());
        total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    const double flops = 2.0 * 2.0 * double(kTokens) * dIn * kSaeWidth;
    state.counters["GFLOP/s"] = benchmark::Counter(
        flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
    constexpr double kMiB = 1024.0 * 1024.0;
    state.counters["weights_MiB"] = 4.0 * (2.0 * dIn * kSaeWidth + kSaeWidth + dIn) / kMiB;
    state.counters["encoding_MiB"] = 4.0 * kTokens * (kSaeWidth + 2.0 * dIn) / kMiB;
    if (passSeconds > 0.0)
        state.counters["of_pass"] = total / double(state.iterations()) / passSeconds;
    state.SetLabel(state.range(0) == 1 ? "topk 64" : "relu");
}
} // namespace

BENCHMARK(BM_Llama1BPass)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);
BENCHMARK(BM_SaeEncode16k)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(3.0);
BENCHMARK_MAIN();
