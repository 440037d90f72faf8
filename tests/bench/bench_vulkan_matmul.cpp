// The Vulkan backend's linear (shaders/matmul.comp) against Eigen's GEMM in the same process, on
// BERT-base shapes: attention projections (128×768·768ᵀ) and the FFN up-projection at T = 512
// (512×768·3072ᵀ). Each iteration records one linear and waits for it (submit + fence included,
// as in a forward pass of one op); Eigen runs the same product for at least as long afterwards.
// Counters: vk_GFLOPs, eigen_GFLOPs and vk_over_eigen; bf16_over_f32 times the same linear with
// w kept in BF16 (16-bit storage, where the device has it). Pin a device with
// HEADLIGHT_VULKAN_DEVICE; on lavapipe expect the device to lose to Eigen by one to two orders of
// magnitude.
#include "backend/backend.h"
#include "backend/vulkan/context.h"
#include "backend/vulkan/vk_error.h"
#include "io/stored_matrix.h"

#include <benchmark/benchmark.h>
#include <bit>
#include <chrono>
#include <random>

using namespace headlight;

namespace {

Tensor randomTensor(std::vector<int64_t> shape, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    Tensor t(std::move(shape));
    for (float& v : t.values())
        v = dist(rng);
    return t;
}

double seconds(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Eigen's rate for the same product, run for at least `minSeconds`.
double eigenGflops(const Tensor& x, const Tensor& w, double flops, double minSeconds) {
    RowMatrix out(x.dim(0), w.dim(0));
    int runs = 0;
    const auto start = std::chrono::steady_clock::now();
    do {
        out.noalias() = x.matrix() * w.matrix().transpose();
        benchmark::DoNotOptimize(out.data());
        ++runs;
    } while (seconds(start) < minSeconds);
    return flops * runs / seconds(start) / 1e9;
}

// The device's rate for the same linear with w truncated to BF16 and uploaded in its stored form,
// run for at least `minSeconds`.
double bf16Gflops(Backend& backend, const Tensor& w, const DeviceTensor& x, const DeviceTensor& b,
                  DeviceTensor& out, double flops, double minSeconds) {
    std::vector<uint16_t> bits(w.size());
    for (std::size_t i = 0; i < bits.size(); ++i)
        bits[i] = uint16_t(std::bit_cast<uint32_t>(w.values()[i]) >> 16);
    const io::StoredMatrix stored{io::DType::BF16, reinterpret_cast<const std::byte*>(bits.data()),
                                  w.dim(0), w.dim(1), nullptr};
    const DeviceTensor dw = backend.uploadStored(stored);
    backend.linear(x, dw, &b, out); // pipeline creation outside the timing
    backend.finish();
    int runs = 0;
    const auto start = std::chrono::steady_clock::now();
    do {
        backend.linear(x, dw, &b, out);
        backend.finish();
        ++runs;
    } while (seconds(start) < minSeconds);
    return flops * runs / seconds(start) / 1e9;
}

void linearVsEigen(benchmark::State& state) {
    const int64_t M = state.range(0), K = state.range(1), N = state.range(2);
    std::unique_ptr<Backend> backend;
    try {
        backend = makeVulkanBackend(vk::Context::create());
    } catch (const vk::VulkanError& error) {
        state.SkipWithError(error.what());
        return;
    }
    const Tensor x = randomTensor({M, K}, 1), w = randomTensor({N, K}, 2), b = randomTensor({N}, 3);
    const DeviceTensor dx = backend->upload(x), dw = backend->upload(w), db = backend->upload(b);
    DeviceTensor out = backend->allocate({M, N});
    backend->linear(dx, dw, &db, out); // pipeline creation and first-touch outside the timing
    backend->finish();

    const double flops = 2.0 * double(M) * double(N) * double(K);
    double deviceSeconds = 0.0;
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        backend->linear(dx, dw, &db, out);
        backend->finish();
        const double elapsed = seconds(start);
        state.SetIterationTime(elapsed);
        deviceSeconds += elapsed;
    }
    const double vk = flops * double(state.iterations()) / deviceSeconds / 1e9;
    const double eigen = eigenGflops(x, w, flops, std::max(0.2, deviceSeconds / 4));
    state.counters["vk_GFLOPs"] = vk;
    state.counters["eigen_GFLOPs"] = eigen;
    state.counters["vk_over_eigen"] = vk / eigen;
    state.counters["bf16_over_f32"] =
        bf16Gflops(*backend, w, dx, db, out, flops, std::max(0.2, deviceSeconds / 4)) / vk;
    state.SetLabel(backend->deviceName());
}
} // namespace

BENCHMARK(linearVsEigen)
    ->Args({128, 768, 768})
    ->Args({512, 768, 3072})
    ->Args({1, 768, 3072})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);

BENCHMARK_MAIN();
