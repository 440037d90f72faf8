// The attention atlas at long T (issue 20's numbers): the zoo's RoPE model at T = 32,768 and a
// BERT-base-sized random model at T = 8,192, on the CPU backend. Each run times the forward pass
// that captures one layer's queries and keys, the atlas's first overview (one pass over the map,
// no T × T held) and the refinement of a visible region at each zoom level (1,024 tiles a side
// at most), and reports the process's peak RSS. The reference measured in the same run is the
// dense path at the largest T it fits comfortably (T = 2,048: the forward pass keeping the layer's
// [H, T, T] probabilities, pooled with poolDense); the counter dense_ratio is the atlas's overview
// time over the dense path's at that T. BM_AtlasVariantOverview does the same for a Longformer
// mask and FAVOR+ on the RoPE model at T = 8,192, against the exact atlas's overview there.
#include "analysis/atlas_variant.h"
#include "backend/backend.h"
#include "bert_base.h"
#include "model/transformer.h"

#include <benchmark/benchmark.h>
#include <chrono>
#include <ctime>
#include <random>
#include <sys/resource.h>

using namespace headlight;
using namespace headlight::analysis;

namespace {

double peakRssMiB() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_maxrss) / 1024.0;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

ModelInput randomIds(int64_t tokens, int64_t vocab) {
    std::mt19937 random(3);
    std::uniform_int_distribution<int32_t> id(5, int32_t(vocab - 1));
    ModelInput input;
    for (int64_t t = 0; t < tokens; ++t)
        input.ids.push_back(id(random));
    return input;
}

// BERT-base's shapes with a position table long enough for T = 8,192 (random weights).
std::unique_ptr<TransformerModel> bertBaseSized(Backend& backend) {
    const ModelSpec spec = bench::bertBase(8192);
    return std::make_unique<TransformerModel>(spec, bench::randomBertWeights(spec), backend);
}

std::unique_ptr<TransformerModel> modelNamed(int which, Backend& backend) {
    return which == 0 ? loadModel(HEADLIGHT_SOURCE_DIR "/resources/models/rope", backend)
                      : bertBaseSized(backend);
}

// Seconds of the dense path at T: forward keeping the layer's maps, then pooling head 0.
double densePathSeconds(const TransformerModel& model, int64_t tokens, int layer) {
    CaptureRequest capture;
    capture.layers = {layer};
    const auto start = std::chrono::steady_clock::now();
    const Trace trace = model.forward(randomIds(tokens, model.spec().vocabSize), capture);
    const Tensor& all = trace.layers[std::size_t(layer)].probabilities;
    Tensor head({tokens, tokens});
    std::copy(all.data(), all.data() + tokens * tokens, head.data());
    const AtlasRegion whole{0, tokens, 0, tokens};
    benchmark::DoNotOptimize(
        poolDense(head, whole, AttentionAtlas::tileFor(whole, 1024), TilePooling::Mean));
    return secondsSince(start);
}

// range(0): 0 the RoPE zoo model, 1 the BERT-base-sized model; range(1): T; range(2): the layer
// drawn, 0 the first or 1 the last (the pass stops after the layer drawn, so the first layer's
// forward time is one layer's).
void BM_AtlasOverview(benchmark::State& state) {
    const auto backend = makeCpuBackend();
    const auto model = modelNamed(int(state.range(0)), *backend);
    const int64_t tokens = state.range(1);
    const int layer = state.range(2) == 0 ? 0 : model->spec().layers - 1;
    double forward = 0, overview = 0, refineWorst = 0;
    for (auto _ : state) {
        CaptureRequest capture;
        capture.probabilities = false;
        capture.queriesKeys = true;
        capture.layers = {layer};
        capture.finalState = false;
        auto start = std::chrono::steady_clock::now();
        const Trace trace = model->forward(randomIds(tokens, model->spec().vocabSize), capture);
        forward = secondsSince(start);
        start = std::chrono::steady_clock::now();
        const AttentionAtlas atlas(
            atlasInputOf(trace.layers[std::size_t(layer)], model->spec(), {}), 0);
        const AtlasRegion whole{0, tokens, 0, tokens};
        benchmark::DoNotOptimize(
            atlas.tiles(whole, AttentionAtlas::tileFor(whole, 1024), TilePooling::Mean));
        overview = secondsSince(start);
        // Zooming in around the middle, a region half as wide each level, down to 64 tokens, on
        // the tile grid of its level as the view asks for it.
        for (int64_t extent = tokens / 2; extent >= 64; extent /= 2) {
            const int64_t tile = AttentionAtlas::tileFor({0, extent, 0, extent}, 1024);
            const int64_t q0 = (tokens - extent) / 2 / tile * tile,
                          k0 = (tokens - extent) / 3 / tile * tile;
            const AtlasRegion region{q0, q0 + extent, k0, k0 + extent};
            start = std::chrono::steady_clock::now();
            benchmark::DoNotOptimize(atlas.tiles(region, tile, TilePooling::Max));
            refineWorst = std::max(refineWorst, secondsSince(start));
        }
    }
    const double dense = densePathSeconds(*model, 2048, layer);
    state.counters["cpu_s"] = double(std::clock()) / CLOCKS_PER_SEC;
    state.counters["forward_s"] = forward;
    state.counters["overview_s"] = overview;
    state.counters["refine_worst_s"] = refineWorst;
    state.counters["peak_rss_MiB"] = peakRssMiB();
    state.counters["dense_2048_s"] = dense;
    state.counters["dense_ratio"] = overview / dense;
}
// The exact atlas's overview, or the variant's (rows of keys or feature maps first), at T.
double overviewSeconds(const TransformerModel& model, int64_t tokens, int layer,
                       const variants::VariantSpec& variant, double* forward) {
    CaptureRequest capture;
    capture.probabilities = false;
    capture.queriesKeys = true;
    capture.layers = {layer};
    auto start = std::chrono::steady_clock::now();
    const Trace trace = model.forward(randomIds(tokens, model.spec().vocabSize), capture, variant);
    if (forward) *forward = secondsSince(start);
    start = std::chrono::steady_clock::now();
    const AttentionAtlas atlas(
        atlasInputOf(trace.layers[std::size_t(layer)], model.spec(), {}, variant, layer), 0);
    const AtlasRegion whole{0, tokens, 0, tokens};
    benchmark::DoNotOptimize(
        atlas.tiles(whole, AttentionAtlas::tileFor(whole, 1024), TilePooling::Mean));
    return secondsSince(start);
}

// range(0): 0 Longformer (window 256, global token 0), 1 FAVOR+ (64 features); the RoPE zoo
// model at T = 8,192.
void BM_AtlasVariantOverview(benchmark::State& state) {
    const auto backend = makeCpuBackend();
    const auto model = modelNamed(0, *backend);
    const char* json = state.range(0) == 0 ? R"({"mask": {"preset": "longformer", "window": 256}})"
                                           : R"({"attention": {"kernel": "favor"}})";
    const variants::VariantSpec variant = variants::parseVariantSpec(json);
    const int64_t tokens = 8192;
    const int layer = model->spec().layers - 1;
    double forward = 0, overview = 0;
    for (auto _ : state)
        overview = overviewSeconds(*model, tokens, layer, variant, &forward);
    const double exact = overviewSeconds(*model, tokens, layer, {}, nullptr);
    state.counters["forward_s"] = forward;
    state.counters["overview_s"] = overview;
    state.counters["exact_overview_s"] = exact;
    state.counters["exact_ratio"] = overview / exact;
    state.counters["peak_rss_MiB"] = peakRssMiB();
}
} // namespace

BENCHMARK(BM_AtlasVariantOverview)->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_AtlasOverview)
    ->Args({0, 32768, 1})
    ->Args({1, 8192, 1})
    ->Args({1, 8192, 0})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);
BENCHMARK_MAIN();
