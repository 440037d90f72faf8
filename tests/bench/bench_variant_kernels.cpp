// One layer's attention by each approximate kernel (core/variants/*_attention.cpp) and by three
// sparse masks (run over rows of keys above 1024 tokens) against exact softmax attention, at
// T = 1024, 2048 and 4096 on BERT-base shapes (H = 12, d = 64, scale 1/8;
// random q, k, v; CPU backend; nothing captured, so no kernel materialises a T × T map).
// Parameters are VariantSpec's defaults (features 64, 8 buckets × 1 round × chunk 32, factor 5,
// Linformer k = 32, MCA stride 32, 16 landmarks × 6 pinv iterations).
// Counters: `vs_softmax` = this kernel's time / exact softmax attention's at the same T, measured
// in the same process; `peak_MB` = the peak of live heap bytes during one call above the bytes live
// before it (global operator new/delete count every allocation: tensors, host staging, masks).
#include "backend/backend.h"
#include "variants/attention_plan.h"
#include "variants/composed_attention.h"
#include "variants/sparse_mask.h"

#include <atomic>
#include <benchmark/benchmark.h>
#include <chrono>
#include <cstdlib>
#include <map>
#include <new>
#include <random>

using namespace headlight;
using namespace headlight::variants;

namespace {

std::atomic<std::size_t> liveBytes{0}, peakBytes{0};

// Each block carries its size in front, so that delete can uncount it.
constexpr std::size_t kHeader = alignof(std::max_align_t);

void* countedAlloc(std::size_t size) {
    auto* block = static_cast<unsigned char*>(std::malloc(size + kHeader));
    if (!block) throw std::bad_alloc();
    *reinterpret_cast<std::size_t*>(block) = size;
    const std::size_t now = liveBytes += size;
    std::size_t peak = peakBytes.load();
    while (now > peak && !peakBytes.compare_exchange_weak(peak, now)) {
    }
    return block + kHeader;
}

void countedFree(void* pointer) {
    if (!pointer) return;
    auto* block = static_cast<unsigned char*>(pointer) - kHeader;
    liveBytes -= *reinterpret_cast<std::size_t*>(block);
    std::free(block);
}
} // namespace

void* operator new(std::size_t size) {
    return countedAlloc(size);
}
void* operator new[](std::size_t size) {
    return countedAlloc(size);
}
void operator delete(void* pointer) noexcept {
    countedFree(pointer);
}
void operator delete[](void* pointer) noexcept {
    countedFree(pointer);
}
void operator delete(void* pointer, std::size_t) noexcept {
    countedFree(pointer);
}
void operator delete[](void* pointer, std::size_t) noexcept {
    countedFree(pointer);
}

namespace {

constexpr int kHeads = 12, kHeadDim = 64;

struct Layer {
    std::unique_ptr<Backend> backend = makeCpuBackend();
    LayerAttention attention;
    AttentionShape shape;
};

Tensor randomTensor(std::vector<int64_t> shape, std::mt19937& rng) {
    Tensor t(std::move(shape));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float& v : t.values())
        v = normal(rng);
    return t;
}

Layer& layerFor(int64_t tokens) {
    static std::map<int64_t, Layer> layers;
    auto [it, inserted] = layers.try_emplace(tokens);
    Layer& layer = it->second;
    if (!inserted) return layer;
    std::mt19937 rng(static_cast<uint32_t>(tokens));
    Backend& backend = *layer.backend;
    layer.attention.q = backend.upload(randomTensor({kHeads, tokens, kHeadDim}, rng));
    layer.attention.k = backend.upload(randomTensor({kHeads, tokens, kHeadDim}, rng));
    layer.attention.v = backend.upload(randomTensor({kHeads, tokens, kHeadDim}, rng));
    layer.attention.scale = 0.125f;
    layer.shape = {kHeads, kHeads, kHeadDim, tokens, false, 0, {}};
    return layer;
}

VariantSpec kernelSpec(AttentionKernel kernel) {
    VariantSpec spec;
    spec.kernel = kernel;
    return spec;
}

// Sparse masks at BERT-scale windows: Longformer's 256 keys each side plus token 0, BigBird's
// ±1 block of 64 with 3 random blocks and token 0, the Sparse Transformer's stride 64.
VariantSpec maskSpec(const char* preset) {
    PresetOptions options;
    options.window = 256;
    options.block = 64;
    options.random = 3;
    options.stride = 64;
    VariantSpec spec;
    spec.mask = SparseMask{};
    spec.mask->preset = preset;
    spec.mask->parts = presetParts(preset, options);
    return spec;
}

void attendOnce(Layer& layer, const VariantSpec& spec) {
    const AttentionPlan plan = planAttention(*layer.backend, layer.shape, spec);
    AttentionMemory memory;
    const AttentionOutputs out =
        attendComposed(*layer.backend, layer.attention, spec, plan, memory, {});
    layer.backend->finish();
    benchmark::DoNotOptimize(out.context.storage());
}

double secondsOf(Layer& layer, const VariantSpec& spec, int runs) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < runs; ++i)
        attendOnce(layer, spec);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / runs;
}

// Exact softmax attention's time at T, measured once per process.
double softmaxSeconds(int64_t tokens) {
    static std::map<int64_t, double> seconds;
    auto it = seconds.find(tokens);
    if (it == seconds.end())
        it = seconds.emplace(tokens, secondsOf(layerFor(tokens), VariantSpec{}, 2)).first;
    return it->second;
}

std::size_t peakOf(Layer& layer, const VariantSpec& spec) {
    const std::size_t before = liveBytes.load();
    peakBytes = before;
    attendOnce(layer, spec);
    return peakBytes.load() - before;
}

void BM_Attention(benchmark::State& state, const VariantSpec& spec) {
    const int64_t tokens = state.range(0);
    Layer& layer = layerFor(tokens);
    const double reference = softmaxSeconds(tokens);
    double total = 0.0;
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        attendOnce(layer, spec);
        total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    state.counters["vs_softmax"] = total / double(state.iterations()) / reference;
    state.counters["peak_MB"] = double(peakOf(layer, spec)) / 1e6;
}
} // namespace

#define HEADLIGHT_KERNEL_BENCH(name, spec)                                                         \
    BENCHMARK_CAPTURE(BM_Attention, name, spec)                                                    \
        ->Arg(1024)                                                                                \
        ->Arg(2048)                                                                                \
        ->Arg(4096)                                                                                \
        ->Unit(benchmark::kMillisecond)                                                            \
        ->UseRealTime()                                                                            \
        ->MinTime(0.5)

HEADLIGHT_KERNEL_BENCH(softmax, kernelSpec(AttentionKernel::Softmax));
HEADLIGHT_KERNEL_BENCH(lsh, kernelSpec(AttentionKernel::Lsh));
HEADLIGHT_KERNEL_BENCH(favor, kernelSpec(AttentionKernel::Favor));
HEADLIGHT_KERNEL_BENCH(rfa, kernelSpec(AttentionKernel::Rfa));
HEADLIGHT_KERNEL_BENCH(linear_elu, kernelSpec(AttentionKernel::LinearElu));
HEADLIGHT_KERNEL_BENCH(probsparse, kernelSpec(AttentionKernel::ProbSparse));
HEADLIGHT_KERNEL_BENCH(linformer, kernelSpec(AttentionKernel::Linformer));
HEADLIGHT_KERNEL_BENCH(memory_compressed, kernelSpec(AttentionKernel::MemoryCompressed));
HEADLIGHT_KERNEL_BENCH(nystrom, kernelSpec(AttentionKernel::Nystrom));
HEADLIGHT_KERNEL_BENCH(longformer, maskSpec("longformer"));
HEADLIGHT_KERNEL_BENCH(bigbird, maskSpec("bigbird"));
HEADLIGHT_KERNEL_BENCH(sparse_strided, maskSpec("sparse_strided"));
BENCHMARK_MAIN();
