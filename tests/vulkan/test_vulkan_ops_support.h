#pragma once
// Helpers for the Vulkan parity tests: seeded inputs, both backends side by side, and comparison
// of a device result with the CPU backend's (the reference) under stated tolerances.
//
// Tolerances (f32 on both sides; the backends differ only in summation order and in libm
// versus shader transcendentals):
//   NMSE = Σ(got - want)² / Σ want²            ≤ 1e-11
//   |got - want| ≤ 2e-5 · max(1, max|want|)      for every element (max-abs, relative to scale)
// and every element finite on both sides (test::compareValues). Device outputs start as NaN, so an
// element a kernel forgets to write fails; every device buffer carries guard rows
// (VulkanBackendOptions:: guardRows), so an element written out of bounds fails too.

#include "backend/backend.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/vulkan/context.h"
#include "backend/vulkan/vulkan_backend.h"
#include "backend/vulkan/vulkan_storage.h"
#include "compare.h"
#include "tensor/tensor.h"

#include <QTest>
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>

namespace headlight::test {

inline Tensor randomTensor(std::vector<int64_t> shape, uint32_t seed, float lo = -1.0f,
                           float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    Tensor t(std::move(shape));
    for (float& v : t.values())
        v = dist(rng);
    return t;
}

struct Tolerance {
    double nmse = 1e-11;
    double maxAbs = 2e-5; // times max(1, max|want|)
};

struct Comparison {
    double nmse = 0.0;
    Difference max; // max.maxAbs is +inf when either side holds a NaN or an infinity, or is empty
};

inline Comparison compareTensors(const Tensor& got, const Tensor& want) {
    Comparison c;
    c.max = compareValues(got, want);
    if (!c.max.comparable()) return c;
    double err = 0.0, ref = 0.0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        const double g = got.values()[i], w = want.values()[i];
        err += (g - w) * (g - w);
        ref += w * w;
    }
    c.nmse = ref > 0.0 ? err / ref : err;
    return c;
}

inline bool closeEnough(const Tensor& got, const Tensor& want, const std::string& what,
                        Tolerance tol = {}) {
    const Comparison c = compareTensors(got, want);
    const bool ok =
        c.max.comparable() && c.nmse <= tol.nmse && c.max.maxAbs <= tol.maxAbs * c.max.scale;
    if (!ok)
        qWarning("%s: nmse %.3g, max abs %.3g at %s, scale %.3g", what.c_str(), c.nmse,
                 c.max.maxAbs, qPrintable(c.max.where), c.max.scale);
    return ok;
}

// One tensor on both backends.
struct Both {
    DeviceTensor gpu, cpu;
};

// The Vulkan backend under test next to the CPU reference.
class BackendPair {
public:
    BackendPair(std::shared_ptr<vk::Context> context, vk::VulkanBackendOptions options)
        : gpu_(vk::makeVulkanBackend(std::move(context), options))
        , cpu_(std::make_unique<cpu::CpuBackend>()) {} // the raw ops: no debug guard

    Backend& gpu() { return *gpu_; }
    Backend& cpu() { return *cpu_; }
    Both upload(const Tensor& host) { return {gpu_->upload(host), cpu_->upload(host)}; }
    // An output: NaN on the device, so unwritten elements show.
    Both output(const std::vector<int64_t>& shape) {
        return {gpu_->upload(Tensor(shape, std::numeric_limits<float>::quiet_NaN())),
                cpu_->allocate(shape)};
    }
    // Compares the device result with the reference and checks the device guards.
    bool matches(const Both& t, const std::string& what, Tolerance tol = {}) {
        const Tensor got = gpu_->download(t.gpu), want = cpu_->download(t.cpu);
        if (!vk::storageOf(t.gpu).guardsIntact()) {
            qWarning("%s: a kernel wrote outside the tensor (guard rows changed)", what.c_str());
            return false;
        }
        return closeEnough(got, want, what, tol);
    }

private:
    std::unique_ptr<Backend> gpu_, cpu_;
};
} // namespace headlight::test
