#include "cpu_gemm.h"

#include "tensor/tensor.h"

#ifdef HEADLIGHT_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace headlight::cpu {

#ifdef HEADLIGHT_HAVE_OPENBLAS
// Debian's OpenMP build of OpenBLAS: inside one of our OpenMP loops (the per-head or per-batch
// products) it runs single-threaded, outside it uses every OpenMP thread, so nothing
// oversubscribes.
void gemm(const float* a, const float* b, float* out, int64_t m, int64_t k, int64_t n,
          bool transposeB, float alpha) {
    if (m == 0 || n == 0) return;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, transposeB ? CblasTrans : CblasNoTrans, blasint(m),
                blasint(n), blasint(k), alpha, a, blasint(k), b, blasint(transposeB ? k : n), 0.0f,
                out, blasint(n));
}

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

std::string gemmLibrary() {
    return "Eigen";
}
#endif

} // namespace headlight::cpu
