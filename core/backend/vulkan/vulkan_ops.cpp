// VulkanBackend ops that walk rows independently: gatherRows, layerNorm, rmsNorm, activation,
// gatedActivation, rope (add is binary, in vulkan_tensor_algebra.cpp). Each records one dispatch
// per row segment (one segment unless a tensor spans several storage buffers).
#include "buffer.h"
#include "op_support.h"
#include "vk_error.h"
#include "vulkan_backend.h"
#include "vulkan_storage.h"

#include <array>
#include <string>

namespace headlight::vk {
namespace {

uint32_t base(const VulkanStorage::Location& at, int64_t rowLength) {
    return uint32_t(at.row * rowLength);
}

struct ActivationPush {
    uint32_t n, xBase, outBase;
};
struct GatedPush {
    uint32_t n, gateBase, upBase, outBase;
};
struct NormPush {
    uint32_t D, xRow0, outRow0, gammaBase, betaBase;
    float eps;
};
struct GatherPush {
    uint32_t D, t0, outRow0, tableRow0, tableRows, tableBufferRow0;
};
struct RopePush {
    uint32_t rows, heads, D, t0, xRow0, R, interleaved;
};
} // namespace

void VulkanBackend::gatherRows(const DeviceTensor& table, std::span<const int32_t> ids,
                               DeviceTensor& out) {
    const int64_t D = lastDim(table), V = table.size() / std::max<int64_t>(D, 1);
    requireShape("gatherRows", "out", out, {int64_t(ids.size()), D});
    for (const DeviceTensor* t : {&table, static_cast<const DeviceTensor*>(&out)})
        requireStorageRows("gatherRows", *t);
    for (const int32_t id : ids)
        if (id < 0 || id >= V)
            throw std::out_of_range("gatherRows: id " + std::to_string(id) + " out of range");
    if (ids.empty() || D == 0) return;
    const VulkanStorage &ts = useWeight(table), &os = use(out);
    const Buffer& idBuffer = transient(std::as_bytes(ids));
    const auto& shader =
        pipeline("gather_rows", {config_.elementwiseWorkgroup, uint32_t(ts.dtype())});
    for (const RowSegment& s : rowSegments(int64_t(ids.size()), {{&os}}))
        for (std::size_t c = 0; c < ts.chunkCount(); ++c) {
            const auto op = os.locate(s.begin);
            const auto tp = ts.chunkStart(c);
            const GatherPush push{uint32_t(D),
                                  uint32_t(s.begin),
                                  op.row,
                                  uint32_t(ts.chunkFirstRow(c)),
                                  uint32_t(ts.chunkRows(c)),
                                  tp.row};
            const std::array<Binding, 3> bindings{{{tp.buffer}, {&idBuffer}, {op.buffer, true}}};
            recorder_.dispatch(shader, bindings, push, 1, uint32_t(s.rows()));
        }
}

void VulkanBackend::layerNorm(const DeviceTensor& x, const DeviceTensor& gamma,
                              const DeviceTensor& beta, float eps, DeviceTensor& out) {
    const int64_t D = lastDim(x);
    requireShape("layerNorm", "out", out, x.shape());
    requireShape("layerNorm", "gamma", gamma, {D});
    requireShape("layerNorm", "beta", beta, {D});
    for (const DeviceTensor* t : {&x, static_cast<const DeviceTensor*>(&out)})
        requireStorageRows("layerNorm", *t);
    const VulkanStorage &xs = use(x), &gs = use(gamma), &bs = use(beta), &os = use(out);
    const auto& shader = pipeline("layer_norm", {config_.rowWorkgroup});
    for (const RowSegment& s : rowSegments(xs.rows(), {{&xs}, {&os}})) {
        const auto xp = xs.locate(s.begin), op = os.locate(s.begin);
        const auto gp = gs.locate(0), bp = bs.locate(0);
        const NormPush push{uint32_t(D), xp.row, op.row, base(gp, D), base(bp, D), eps};
        const std::array<Binding, 4> bindings{
            {{xp.buffer}, {gp.buffer}, {bp.buffer}, {op.buffer, true}}};
        recorder_.dispatch(shader, bindings, push, 1, uint32_t(s.rows()));
    }
}

void VulkanBackend::rmsNorm(const DeviceTensor& x, const DeviceTensor& gamma, float eps,
                            DeviceTensor& out) {
    const int64_t D = lastDim(x);
    requireShape("rmsNorm", "out", out, x.shape());
    requireShape("rmsNorm", "gamma", gamma, {D});
    for (const DeviceTensor* t : {&x, static_cast<const DeviceTensor*>(&out)})
        requireStorageRows("rmsNorm", *t);
    const VulkanStorage &xs = use(x), &gs = use(gamma), &os = use(out);
    const auto& shader = pipeline("rms_norm", {config_.rowWorkgroup});
    for (const RowSegment& s : rowSegments(xs.rows(), {{&xs}, {&os}})) {
        const auto xp = xs.locate(s.begin), op = os.locate(s.begin);
        const auto gp = gs.locate(0);
        const NormPush push{uint32_t(D), xp.row, op.row, base(gp, D), 0, eps};
        const std::array<Binding, 3> bindings{{{xp.buffer}, {gp.buffer}, {op.buffer, true}}};
        recorder_.dispatch(shader, bindings, push, 1, uint32_t(s.rows()));
    }
}

void VulkanBackend::activation(const DeviceTensor& x, Activation kind, DeviceTensor& out) {
    requireShape("activation", "out", out, x.shape());
    const VulkanStorage &xs = use(x), &os = use(out);
    const int64_t N = xs.rowLength();
    const auto& shader = pipeline("activation", {config_.elementwiseWorkgroup, uint32_t(kind)});
    for (const RowSegment& s : rowSegments(xs.rows(), {{&xs}, {&os}})) {
        const auto xp = xs.locate(s.begin), op = os.locate(s.begin);
        const int64_t n = s.rows() * N;
        const ActivationPush push{uint32_t(n), base(xp, N), base(op, N)};
        const std::array<Binding, 2> bindings{{{xp.buffer}, {op.buffer, true}}};
        recorder_.dispatch(shader, bindings, push, groupsFor(n, config_.elementwiseWorkgroup));
    }
}

void VulkanBackend::gatedActivation(const DeviceTensor& gate, const DeviceTensor& up,
                                    Activation kind, DeviceTensor& out) {
    requireShape("gatedActivation", "up", up, gate.shape());
    requireShape("gatedActivation", "out", out, gate.shape());
    for (const DeviceTensor* t : {&gate, &up, static_cast<const DeviceTensor*>(&out)})
        requireStorageRows("gatedActivation", *t);
    const VulkanStorage &gs = use(gate), &us = use(up), &os = use(out);
    const int64_t N = gs.rowLength();
    const auto& shader =
        pipeline("gated_activation", {config_.elementwiseWorkgroup, uint32_t(kind)});
    for (const RowSegment& s : rowSegments(gs.rows(), {{&gs}, {&us}, {&os}})) {
        const auto gp = gs.locate(s.begin), up_ = us.locate(s.begin), op = os.locate(s.begin);
        const int64_t n = s.rows() * N;
        const GatedPush push{uint32_t(n), base(gp, N), base(up_, N), base(op, N)};
        const std::array<Binding, 3> bindings{{{gp.buffer}, {up_.buffer}, {op.buffer, true}}};
        recorder_.dispatch(shader, bindings, push, groupsFor(n, config_.elementwiseWorkgroup));
    }
}

void VulkanBackend::rope(DeviceTensor& x, const RotaryParams& p,
                         std::span<const int32_t> positions) {
    if (p.rotaryDim <= 0 || p.rotaryDim % 2 != 0 || p.rotaryDim > p.headDim)
        badShape("rope", "rotaryDim " + std::to_string(p.rotaryDim) +
                             " is not even and within headDim " + std::to_string(p.headDim));
    requireShape("rope", "x", x, {int64_t(positions.size()), int64_t(p.heads) * p.headDim});
    requireStorageRows("rope", x);
    if (positions.empty()) return;
    const VulkanStorage& xs = use(x);
    const Buffer& table = ropeTable(positions, p.rotaryDim, p.theta);
    const auto& shader = pipeline("rope", {config_.elementwiseWorkgroup});
    for (const RowSegment& s : rowSegments(xs.rows(), {{&xs}})) {
        const auto xp = xs.locate(s.begin);
        const RopePush push{uint32_t(s.rows()),
                            uint32_t(p.heads),
                            uint32_t(p.headDim),
                            uint32_t(s.begin),
                            xp.row,
                            uint32_t(p.rotaryDim),
                            uint32_t(p.interleaved)};
        const std::array<Binding, 2> bindings{{{xp.buffer, true}, {&table}}};
        recorder_.dispatch(
            shader, bindings, push,
            groupsFor(s.rows() * p.heads * p.rotaryDim / 2, config_.elementwiseWorkgroup));
    }
}

} // namespace headlight::vk
