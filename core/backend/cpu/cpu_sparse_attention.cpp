// CpuBackend::sparseAttention: softmax attention over a pattern's rows of keys (backend.h), one
// query at a time, with no T × T matrix: O(E·d) time, O(longest row) scratch.
#include "cpu_backend.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace headlight::cpu {

void CpuBackend::sparseAttention(const DeviceTensor& q, const DeviceTensor& k,
                                 const DeviceTensor& v, const SparsePattern& pattern, float scale,
                                 std::span<const float> alibiSlopes, DeviceTensor& context,
                                 DeviceTensor* weights) {
    checkSparseAttention(q, k, v, pattern, alibiSlopes, context, weights);
    const int64_t heads = q.dim(0), tokens = q.dim(1), dim = q.dim(2), group = heads / k.dim(0);
    const int64_t entries = pattern.entries();
    const float* qv = valuesOf(q).data();
    const float* kv = valuesOf(k).data();
    const float* vv = valuesOf(v).data();
    float* out = valuesOf(context).data();
    float* w = weights ? valuesOf(*weights).data() : nullptr;
#pragma omp parallel for
    for (int64_t h = 0; h < heads; ++h) {
        const float* kh = kv + h / group * tokens * dim;
        const float* vh = vv + h / group * tokens * dim;
        const float slope = alibiSlopes.empty() ? 0.0f : alibiSlopes[std::size_t(h)];
        std::vector<float> p;
        for (int64_t i = 0; i < tokens; ++i) {
            const std::size_t row = std::size_t((h % pattern.heads) * tokens + i);
            const int32_t first = pattern.rowStart[row], end = pattern.rowStart[row + 1];
            const bool empty = first == end; // fully masked: uniform over every key
            const int64_t n = empty ? tokens : end - first;
            const auto key = [&](int64_t e) {
                return empty ? e : int64_t(pattern.keys[std::size_t(first + e)]);
            };
            const Eigen::Map<const Eigen::VectorXf> qi(qv + (h * tokens + i) * dim, dim);
            p.assign(std::size_t(n), 0.0f);
            for (int64_t e = 0; !empty && e < n; ++e) {
                const int64_t j = key(e);
                p[std::size_t(e)] =
                    scale * qi.dot(Eigen::Map<const Eigen::VectorXf>(kh + j * dim, dim)) -
                    slope * float(std::llabs(i - j));
            }
            const float top = *std::max_element(p.begin(), p.end());
            float sum = 0.0f;
            for (float& value : p)
                sum += value = std::exp(value - top);
            Eigen::Map<Eigen::VectorXf> oi(out + (h * tokens + i) * dim, dim);
            oi.setZero();
            for (int64_t e = 0; e < n; ++e) {
                p[std::size_t(e)] /= sum;
                oi += p[std::size_t(e)] * Eigen::Map<const Eigen::VectorXf>(vh + key(e) * dim, dim);
            }
            if (w && !empty) std::copy(p.begin(), p.end(), w + h / pattern.heads * entries + first);
        }
    }
}
} // namespace headlight::cpu
