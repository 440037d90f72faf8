// VulkanBackend::linear: out[M, N] = x[M, K] · w[N, K]ᵀ (+ bias) with the register-blocked
// matmul shader. A weight larger than one storage binding (a tied [vocab, hidden] embedding)
// is split by rows of w, i.e. by columns of out; x and out are walked in row segments.
#include "buffer.h"
#include "op_support.h"
#include "vulkan_backend.h"
#include "vulkan_storage.h"

#include <array>

namespace headlight::vk {
namespace {

struct MatmulPush {
    uint32_t M, K, N, nOffset, nCount, xRow0, wRow0, outRow0, hasBias, biasBase;
};
} // namespace

void VulkanBackend::linear(const DeviceTensor& x, const DeviceTensor& w, const DeviceTensor* bias,
                           DeviceTensor& out) {
    const int64_t K = lastDim(x), N = w.size() / std::max<int64_t>(K, 1);
    if (lastDim(w) != K || K == 0)
        badShape("linear", "input " + shapeString(x.shape()) + " does not fit weight " +
                               shapeString(w.shape()));
    requireShape("linear", "out", out, {x.size() / K, N});
    if (bias) requireShape("linear", "bias", *bias, {N});
    matmul(use(x), use(w), bias ? &use(*bias) : nullptr, use(out));
}

void VulkanBackend::matmul(const VulkanStorage& x, const VulkanStorage& w,
                           const VulkanStorage* bias, const VulkanStorage& out) {
    const int64_t K = x.rowLength(), N = w.rows();
    const uint32_t tileM = matmulTileMFor(config_, x.rows());
    const uint32_t columnsPerGroup = config_.matmulWorkgroup * config_.matmulTileN;
    const auto& shader = pipeline("matmul", {config_.matmulWorkgroup, tileM, config_.matmulTileN,
                                             config_.matmulLoadLanes, K % 4 == 0});
    const auto bp = bias ? bias->locate(0) : VulkanStorage::Location{placeholder_.get(), 0};
    for (const RowSegment& s : rowSegments(x.rows(), {{&x}, {&out}}, int64_t(65535) * tileM)) {
        const auto xp = x.locate(s.begin), op = out.locate(s.begin);
        for (std::size_t c = 0; c < w.chunkCount(); ++c) {
            const auto wp = w.chunkStart(c);
            const MatmulPush push{uint32_t(s.rows()),
                                  uint32_t(K),
                                  uint32_t(N),
                                  uint32_t(w.chunkFirstRow(c)),
                                  uint32_t(w.chunkRows(c)),
                                  xp.row,
                                  wp.row,
                                  op.row,
                                  bias != nullptr,
                                  uint32_t(bp.row * N)};
            const std::array<Binding, 4> bindings{
                {{xp.buffer}, {wp.buffer}, {bp.buffer}, {op.buffer, true}}};
            // x: blocks of rows, y: blocks of columns (see matmul.comp).
            recorder_.dispatch(shader, bindings, push, uint32_t((s.rows() + tileM - 1) / tileM),
                               uint32_t((w.chunkRows(c) + columnsPerGroup - 1) / columnsPerGroup));
        }
    }
}
} // namespace headlight::vk
