#pragma once
// The CPU backend's one f32 GEMM. At real model sizes the forward pass is almost all GEMM, and a
// tuned BLAS (OpenBLAS, found at configure time) runs it near this machine's peak where Eigen's
// own kernel reaches about half (docs/dependencies.md). Without OpenBLAS, Eigen computes it.

#include "io/stored_matrix.h"

#include <cstdint>
#include <string>

namespace headlight::cpu {

// out[m, n] = alpha · a[m, k] · op(b), row-major and densely packed; op(b) is b [k, n], or bᵀ
// when transposeB (b is then [n, k], as a linear layer's weight is stored).
void gemm(const float* a, const float* b, float* out, int64_t m, int64_t k, int64_t n,
          bool transposeB, float alpha);

// gemm on blocks of larger row-major matrices (one head's columns of Q, K or V): rows of a, b and
// out start lda, ldb and ldc floats apart.
void gemmStrided(const float* a, int64_t lda, const float* b, int64_t ldb, float* out, int64_t ldc,
                 int64_t m, int64_t k, int64_t n, bool transposeB, float alpha);

// out[m, n] = a[m, k] · wᵀ for a linear layer's weight w [n, k] in its stored dtype: F32 read in
// place; F16 and BF16 widened a panel of rows at a time into a small buffer per thread, each
// panel's product computed by the same GEMM, so no widened copy of w ever exists.
void gemmStored(const float* a, const io::StoredMatrix& w, float* out, int64_t m);

// Which library runs gemm, for `headlight devices` and the benchmarks: "OpenBLAS 0.3.21
// (Cooperlake kernels)" or "Eigen".
std::string gemmLibrary();

} // namespace headlight::cpu
