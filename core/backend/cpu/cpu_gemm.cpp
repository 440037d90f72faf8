#include "cpu_gemm.h"

#include "tensor/tensor.h"

#include <algorithm>
#include <vector>

#ifdef HEADLIGHT_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace headlight::cpu {
namespace {
// Rows of a stored weight widened at once: a 1 MB f32 panel, which stays in a core's L2 cache
// while the GEMM packs it and leaves enough panels to share among the threads; 64 rows at least,
// since a narrower product wastes the GEMM's kernel (it measured 10-15 % slower at K = 8192).
constexpr int64_t kPanelFloats = 1 << 18;
constexpr int64_t kMinPanelRows = 64;
} // namespace

#ifdef HEADLIGHT_HAVE_OPENBLAS
// Debian's OpenMP build of OpenBLAS: inside one of our OpenMP loops (the per-head or per-batch
// products) it runs single-threaded, outside it uses every OpenMP thread, so nothing
// oversubscribes.
void gemm(const float* a, const float* b, float* out, int64_t m, int64_t k, int64_t n,
          bool transposeB, float alpha) {
    if (m == 0 || n == 0) return;
    // Why a GEMV for one row (a decode step, a token appended to a cached pass): sgemm packs all
    // of b before multiplying, which for one row costs more than the product (a third of an
    // append's time); sgemv reads b once.
    if (m == 1)
        return cblas_sgemv(CblasRowMajor, transposeB ? CblasNoTrans : CblasTrans,
                           blasint(transposeB ? n : k), blasint(transposeB ? k : n), alpha, b,
                           blasint(transposeB ? k : n), a, 1, 0.0f, out, 1);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, transposeB ? CblasTrans : CblasNoTrans, blasint(m),
                blasint(n), blasint(k), alpha, a, blasint(k), b, blasint(transposeB ? k : n), 0.0f,
                out, blasint(n));
}

void gemmStrided(const float* a, int64_t lda, const float* b, int64_t ldb, float* out, int64_t ldc,
                 int64_t m, int64_t k, int64_t n, bool transposeB, float alpha) {
    if (m == 0 || n == 0) return;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, transposeB ? CblasTrans : CblasNoTrans, blasint(m),
                blasint(n), blasint(k), alpha, a, blasint(lda), b, blasint(ldb), 0.0f, out,
                blasint(ldc));
}

// out[m, n] (row stride ldc) = a[m, k] · b[n, k]ᵀ.
namespace {
void gemmTransposedB(const float* a, const float* b, float* out, int64_t m, int64_t k, int64_t n,
                     int64_t ldc) {
    if (m == 1) // as in gemm
        return cblas_sgemv(CblasRowMajor, CblasNoTrans, blasint(n), blasint(k), 1.0f, b, blasint(k),
                           a, 1, 0.0f, out, 1);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasint(m), blasint(n), blasint(k), 1.0f,
                a, blasint(k), b, blasint(k), 0.0f, out, blasint(ldc));
}
} // namespace

std::string gemmLibrary() {
    std::string config = openblas_get_config(); // "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..."
    const std::size_t versionEnd = config.find(' ', config.find(' ') + 1);
    return config.substr(0, versionEnd) + " (" + openblas_get_corename() + " kernels)";
}
#else
void gemm(const float* a, const float* b, float* out, int64_t m, int64_t k, int64_t n,
          bool transposeB, float alpha) {
    const ConstMatrixMap am(a, m, k);
    MatrixMap om(out, m, n);
    if (transposeB)
        om.noalias() = alpha * (am * ConstMatrixMap(b, n, k).transpose());
    else
        om.noalias() = alpha * (am * ConstMatrixMap(b, k, n));
}

void gemmStrided(const float* a, int64_t lda, const float* b, int64_t ldb, float* out, int64_t ldc,
                 int64_t m, int64_t k, int64_t n, bool transposeB, float alpha) {
    using Strided = Eigen::Map<const RowMatrix, 0, Eigen::OuterStride<>>;
    const Strided am(a, m, k, Eigen::OuterStride<>(lda));
    Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>> om(out, m, n, Eigen::OuterStride<>(ldc));
    if (transposeB)
        om.noalias() = alpha * (am * Strided(b, n, k, Eigen::OuterStride<>(ldb)).transpose());
    else
        om.noalias() = alpha * (am * Strided(b, k, n, Eigen::OuterStride<>(ldb)));
}

namespace {
void gemmTransposedB(const float* a, const float* b, float* out, int64_t m, int64_t k, int64_t n,
                     int64_t ldc) {
    Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>> om(out, m, n, Eigen::OuterStride<>(ldc));
    om.noalias() = ConstMatrixMap(a, m, k) * ConstMatrixMap(b, n, k).transpose();
}
} // namespace

std::string gemmLibrary() {
    return "Eigen";
}
#endif

void gemmStored(const float* a, const io::StoredMatrix& w, float* out, int64_t m) {
    const int64_t n = w.rows, k = w.cols;
    if (const float* direct = w.directF32()) return gemm(a, direct, out, m, k, n, true, 1.0f);
    if (m == 0 || n == 0) return;
    const int64_t panelRows =
        std::min(n, std::max(kMinPanelRows, kPanelFloats / std::max<int64_t>(k, 1)));
    const int64_t panels = (n + panelRows - 1) / panelRows;
    // Each thread widens its own panels and multiplies them (the GEMM runs single-threaded inside
    // this loop, cpu_gemm.h), so widening is spread over the cores too.
#pragma omp parallel
    {
        std::vector<float> panel(std::size_t(panelRows * k));
#pragma omp for schedule(dynamic)
        for (int64_t p = 0; p < panels; ++p) {
            const int64_t first = p * panelRows, rows = std::min(panelRows, n - first);
            io::widenRows(w, first, rows, panel.data());
            gemmTransposedB(a, panel.data(), out + first, m, k, rows, n);
        }
    }
}

} // namespace headlight::cpu
