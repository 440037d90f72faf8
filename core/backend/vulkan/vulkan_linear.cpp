// VulkanBackend::linear: out[M, N] = x[M, K] · w[N, K]ᵀ (+ bias) with the register-blocked
// matmul shader. A weight larger than one storage binding (a tied [vocab, hidden] embedding)
// is split by rows of w, i.e. by columns of out; x and out are walked in row segments.
// dispatchMatmul records one dispatch of that shader for linear and the batched matmul.
#include "buffer.h"
#include "matmul_dispatch.h"
#include "op_support.h"
#include "row_view.h"
#include "vulkan_backend.h"
#include "vulkan_storage.h"

#include <array>

namespace headlight::vk {

void VulkanBackend::linear(const DeviceTensor& x, const DeviceTensor& w, const DeviceTensor* bias,
                           DeviceTensor& out) {
    const int64_t K = lastDim(x), N = w.size() / std::max<int64_t>(K, 1);
    if (lastDim(w) != K || K == 0)
        badShape("linear", "input " + shapeString(x.shape()) + " does not fit weight " +
                               shapeString(w.shape()));
    const int64_t M = x.size() / K;
    requireShape("linear", "out", out, {M, N});
    if (bias) requireShape("linear", "bias", *bias, {N});
    if (M == 0 || N == 0) return;
    const VulkanStorage& ws = useWeight(w);
    const RowView xv(use(x), K, "linear"), wv(ws, K, "linear"), ov(use(out), N, "linear");
    const auto bp =
        bias ? RowView(use(*bias), N, "linear").at(0) : RowView::At{placeholder_.get(), 0};
    const int64_t maxRows = int64_t(65535) * matmulTileMFor(config_, M);
    for (const RowSegment& s : viewSegments(M, {{&xv}, {&ov}}, maxRows)) {
        const auto xp = xv.at(s.begin), op = ov.at(s.begin);
        for (const RowSegment& piece : viewSegments(N, {{&wv}}, N)) {
            const auto wp = wv.at(piece.begin);
            const MatmulPush push{.M = uint32_t(s.rows()),
                                  .K = uint32_t(K),
                                  .N = uint32_t(N),
                                  .nOffset = uint32_t(piece.begin),
                                  .nCount = uint32_t(piece.rows()),
                                  .ldw = uint32_t(K),
                                  .xBase = xp.element,
                                  .wBase = wp.element,
                                  .outBase = op.element,
                                  .hasBias = bias != nullptr,
                                  .biasBase = bp.element};
            dispatchMatmul({.x = xp.buffer,
                            .w = wp.buffer,
                            .bias = bp.buffer,
                            .out = op.buffer,
                            .push = push,
                            .wDType = uint32_t(ws.dtype())});
        }
    }
}

void VulkanBackend::dispatchMatmul(const MatmulDispatch& d) {
    const MatmulPush& p = d.push;
    const uint32_t tileM = matmulTileMFor(config_, p.M);
    const uint32_t columnsPerGroup = config_.matmulWorkgroup * config_.matmulTileN;
    // vec4 loads need every vec4 that a row starts at to be aligned, in x and (transposed) in w.
    const bool vec4 = p.K % 4 == 0 && p.xBase % 4 == 0 && (!d.transposeB || p.wBase % 4 == 0);
    const auto& shader =
        pipeline("matmul", {config_.matmulWorkgroup, tileM, config_.matmulTileN,
                            config_.matmulLoadLanes, vec4, d.transposeB, d.wDType});
    const std::array<Binding, 4> bindings{{{d.x}, {d.w}, {d.bias}, {d.out, true}}};
    // x: blocks of rows, y: blocks of columns, z: batches (see matmul.comp).
    recorder_.dispatch(shader, bindings, p, (p.M + tileM - 1) / tileM,
                       (p.nCount + columnsPerGroup - 1) / columnsPerGroup, d.batches);
}
} // namespace headlight::vk
