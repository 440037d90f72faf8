// VulkanBackend's batched tensor-algebra ops (backend.h, "tensor algebra for variants"): matmul
// (matmul.comp, the kernel of linear, with a batch index), scatterAddRows and
// causalLinearAttention. A batch whose operands each sit in one storage buffer is one dispatch;
// tensors split over several buffers are walked batch by batch and in row segments where the
// op allows it (see each op).
#include "buffer.h"
#include "context.h"
#include "matmul_dispatch.h"
#include "op_support.h"
#include "row_view.h"
#include "vk_error.h"
#include "vulkan_backend.h"
#include "vulkan_storage.h"

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace headlight::vk {
namespace {

// Batch, rows and columns of a tensor seen as [B, M, N]; 2-D tensors have B = 1.
struct Batched {
    int64_t batch, rows, cols;
};

Batched batchedShape(const DeviceTensor& t, const char* op) {
    const auto& s = t.shape();
    if (s.size() == 2) return {1, s[0], s[1]};
    if (s.size() == 3) return {s[0], s[1], s[2]};
    badShape(op, "expected a 2-D or 3-D tensor, got " + shapeString(s));
}

struct MatmulShape {
    int64_t batch, group, M, K, N;
};

MatmulShape checkMatmul(const DeviceTensor& a, const DeviceTensor& b, bool transposeB,
                        const DeviceTensor& out) {
    const Batched as = batchedShape(a, "matmul"), bs = batchedShape(b, "matmul");
    const int64_t inner = transposeB ? bs.cols : bs.rows, n = transposeB ? bs.rows : bs.cols;
    if (as.cols != inner || bs.batch == 0 || as.batch % bs.batch ||
        out.size() != as.batch * as.rows * n)
        badShape("matmul", shapeString(a.shape()) + " · " + shapeString(b.shape()) +
                               (transposeB ? "ᵀ" : "") + " → " + shapeString(out.shape()) +
                               " do not fit");
    return {as.batch, as.batch / bs.batch, as.rows, as.cols, n};
}

struct CausalLinearPush {
    uint32_t T, d, qBase, kBase, vBase, outBase;
    float eps;
};
struct ScatterPush {
    uint32_t N, target0, entry0;
};

// scatterAddRows' work for the rows of src (in order) whose source and target lie in one pair of
// buffers, grouped by target (see scatter_add_rows.comp).
struct ScatterPlan {
    std::vector<uint32_t> words;
    int64_t targets = 0;
};

ScatterPlan scatterPlan(const std::vector<std::size_t>& rows, std::span<const int32_t> ids,
                        std::span<const float> weights, const RowView& src, const RowView& out) {
    std::map<int32_t, std::vector<std::size_t>> byTarget;
    for (const std::size_t i : rows)
        byTarget[ids[i]].push_back(i);
    ScatterPlan plan;
    std::vector<uint32_t> entries;
    for (const auto& [target, sources] : byTarget) {
        const auto first = uint32_t(entries.size() / 2);
        plan.words.insert(plan.words.end(),
                          {out.at(target).element, first, first + uint32_t(sources.size())});
        for (const std::size_t i : sources)
            entries.insert(entries.end(),
                           {src.at(int64_t(i)).element, std::bit_cast<uint32_t>(weights[i])});
    }
    plan.targets = int64_t(byTarget.size());
    plan.words.insert(plan.words.end(), entries.begin(), entries.end());
    return plan;
}

void checkScatter(const DeviceTensor& src, std::span<const int32_t> ids,
                  std::span<const float> weights, const DeviceTensor& out) {
    const int64_t N = lastDim(src);
    if (int64_t(ids.size()) * N != src.size() || weights.size() != ids.size() || lastDim(out) != N)
        badShape("scatterAddRows", "ids, weights and rows disagree");
    const int64_t rows = out.size() / std::max<int64_t>(N, 1);
    for (const int32_t id : ids)
        if (id < 0 || id >= rows)
            throw std::out_of_range("scatterAddRows: id " + std::to_string(id) + " out of range");
}

void checkCausalLinear(const DeviceTensor& phiQ, const DeviceTensor& phiK, const DeviceTensor& v,
                       const DeviceTensor& out) {
    const Batched qs = batchedShape(phiQ, "causalLinearAttention"),
                  vs = batchedShape(v, "causalLinearAttention");
    if (phiK.shape() != phiQ.shape() || vs.batch != qs.batch || vs.rows != qs.rows ||
        out.size() != v.size() || lastDim(out) != vs.cols)
        badShape("causalLinearAttention", "phiQ " + shapeString(phiQ.shape()) + ", phiK " +
                                              shapeString(phiK.shape()) + ", v " +
                                              shapeString(v.shape()) + " and out " +
                                              shapeString(out.shape()) + " do not fit");
}
} // namespace

void VulkanBackend::matmul(const DeviceTensor& a, const DeviceTensor& b, bool transposeB,
                           float alpha, DeviceTensor& out) {
    const MatmulShape s = checkMatmul(a, b, transposeB, out);
    if (out.size() == 0) return;
    if (s.K == 0) throw VulkanError("matmul: an empty reduction (K = 0) is not supported");
    const RowView av(use(a), s.K, "matmul"), bv(use(b), transposeB ? s.K : s.N, "matmul"),
        ov(use(out), s.N, "matmul");
    const int64_t maxRows = int64_t(65535) * matmulTileMFor(config_, s.M);
    const bool whole = av.singleBuffer() && bv.singleBuffer() && ov.singleBuffer() &&
                       s.M <= maxRows && s.batch <= 65535;
    MatmulPush push{.M = uint32_t(s.M),
                    .K = uint32_t(s.K),
                    .N = uint32_t(s.N),
                    .nOffset = 0,
                    .nCount = uint32_t(s.N),
                    .ldw = uint32_t(s.N),
                    .xBase = 0,
                    .wBase = 0,
                    .outBase = 0,
                    .xBatch = uint32_t(s.M * s.K),
                    .wBatch = uint32_t(s.K * s.N),
                    .outBatch = uint32_t(s.M * s.N),
                    .group = uint32_t(s.group),
                    .alpha = alpha};
    if (whole) {
        const auto ap = av.at(0), bp = bv.at(0), op = ov.at(0);
        push.xBase = ap.element, push.wBase = bp.element, push.outBase = op.element;
        dispatchMatmul({ap.buffer, bp.buffer, placeholder_.get(), op.buffer, push, transposeB,
                        uint32_t(s.batch)});
        return;
    }
    // Split storage: batch by batch, rows of a and out in segments; a transposed b is split by
    // its rows (columns of out) as linear's weight is, an untransposed batch of b must be whole.
    const int64_t bRows = transposeB ? s.N : s.K;
    for (int64_t j = 0; !transposeB && j < s.batch / s.group; ++j)
        if (!bv.oneBuffer(j * bRows, bRows))
            throw VulkanError("matmul: each batch of b [K, N] must fit one storage binding");
    for (int64_t i = 0; i < s.batch; ++i)
        for (const RowSegment& rows : viewSegments(s.M, {{&av, i * s.M}, {&ov, i * s.M}}, maxRows))
            for (const RowSegment& piece :
                 viewSegments(transposeB ? s.N : 1, {{&bv, i / s.group * bRows}}, s.N)) {
                const auto ap = av.at(i * s.M + rows.begin), op = ov.at(i * s.M + rows.begin);
                const auto bp = bv.at(i / s.group * bRows + piece.begin);
                push.M = uint32_t(rows.rows());
                push.nOffset = uint32_t(piece.begin);
                push.nCount = uint32_t(transposeB ? piece.rows() : s.N);
                push.xBase = ap.element, push.wBase = bp.element, push.outBase = op.element;
                dispatchMatmul(
                    {ap.buffer, bp.buffer, placeholder_.get(), op.buffer, push, transposeB, 1});
            }
}

void VulkanBackend::scatterAddRows(const DeviceTensor& src, std::span<const int32_t> ids,
                                   std::span<const float> weights, DeviceTensor& out) {
    checkScatter(src, ids, weights, out);
    const int64_t N = lastDim(src);
    if (ids.empty() || N == 0) return;
    const RowView sv(use(src), N, "scatterAddRows"), ov(use(out), N, "scatterAddRows");
    // One plan per pair of buffers (source row's, target row's); one pair unless split.
    std::map<std::pair<int64_t, int64_t>, std::vector<std::size_t>> byBuffers;
    for (std::size_t i = 0; i < ids.size(); ++i)
        byBuffers[{int64_t(i) / sv.rowsPerBuffer(), ids[i] / ov.rowsPerBuffer()}].push_back(i);
    const auto& shader = pipeline("scatter_add_rows", {config_.elementwiseWorkgroup});
    for (const auto& [buffers, rows] : byBuffers) {
        const ScatterPlan plan = scatterPlan(rows, ids, weights, sv, ov);
        const Buffer& words = transient(std::as_bytes(std::span(plan.words)));
        const std::array<Binding, 3> bindings{{{sv.at(int64_t(rows.front())).buffer},
                                               {&words},
                                               {ov.at(ids[rows.front()]).buffer, true}}};
        for (int64_t t0 = 0; t0 < plan.targets; t0 += 65535) {
            const ScatterPush push{uint32_t(N), uint32_t(t0), uint32_t(3 * plan.targets)};
            recorder_.dispatch(shader, bindings, push, 1,
                               uint32_t(std::min<int64_t>(plan.targets - t0, 65535)));
        }
    }
}

void VulkanBackend::causalLinearAttention(const DeviceTensor& phiQ, const DeviceTensor& phiK,
                                          const DeviceTensor& v, float eps, DeviceTensor& out) {
    checkCausalLinear(phiQ, phiK, v, out);
    const Batched s = batchedShape(phiQ, "causalLinearAttention");
    const int64_t d = lastDim(v);
    if (out.size() == 0) return;
    if (s.cols == 0)
        throw VulkanError("causalLinearAttention: no features (m = 0) is not supported");
    if (3 * s.cols * int64_t(sizeof(float)) > context_->info().maxComputeSharedMemory)
        throw VulkanError("causalLinearAttention: " + std::to_string(s.cols) +
                          " features exceed the device's shared memory");
    const RowView qv(use(phiQ), s.cols, "causalLinearAttention"),
        kv(use(phiK), s.cols, "causalLinearAttention"), vv(use(v), d, "causalLinearAttention"),
        ov(use(out), d, "causalLinearAttention");
    const uint32_t wg = config_.scanWorkgroup;
    const auto& shader = pipeline("causal_linear_attention", {wg, uint32_t(s.cols)});
    const bool whole = qv.singleBuffer() && kv.singleBuffer() && vv.singleBuffer() &&
                       ov.singleBuffer() && s.batch <= 65535;
    // Split storage: one dispatch per batch, whose T rows must each sit in one buffer.
    for (int64_t b = 0; !whole && b < s.batch; ++b)
        for (const RowView* view : {&qv, &kv, &vv, &ov})
            if (!view->oneBuffer(b * s.rows, s.rows))
                throw VulkanError("causalLinearAttention: each batch of phiQ, phiK, v and out "
                                  "must fit one storage binding");
    for (int64_t b = 0; b < (whole ? 1 : s.batch); ++b) {
        const int64_t row = b * s.rows;
        const auto qp = qv.at(row), kp = kv.at(row), vp = vv.at(row), op = ov.at(row);
        const CausalLinearPush push{uint32_t(s.rows), uint32_t(d), qp.element, kp.element,
                                    vp.element,       op.element,  eps};
        const std::array<Binding, 4> bindings{
            {{qp.buffer}, {kp.buffer}, {vp.buffer}, {op.buffer, true}}};
        recorder_.dispatch(shader, bindings, push, uint32_t((d + wg - 1) / wg),
                           uint32_t(whole ? s.batch : 1));
    }
}
} // namespace headlight::vk
