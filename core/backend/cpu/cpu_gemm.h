#pragma once
// The CPU backend's one f32 GEMM. At real model sizes the forward pass is almost all GEMM, and a
// tuned BLAS (OpenBLAS, found at configure time) runs it near this machine's peak where Eigen's
// own kernel reaches about half (docs/dependencies.md). Without OpenBLAS, Eigen computes it.

#include <cstdint>
#include <string>

namespace headlight::cpu {

// out[m, n] = alpha · a[m, k] · op(b), row-major and densely packed; op(b) is b [k, n], or bᵀ
// when transposeB (b is then [n, k], as a linear layer's weight is stored).
void gemm(const float* a, const float* b, float* out, int64_t m, int64_t k, int64_t n,
          bool transposeB, float alpha);

// Which library runs gemm, for `headlight devices` and the benchmarks: "OpenBLAS 0.3.21
// (Cooperlake kernels)" or "Eigen".
std::string gemmLibrary();

} // namespace headlight::cpu
