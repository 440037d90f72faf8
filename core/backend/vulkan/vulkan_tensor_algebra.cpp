// VulkanBackend's row and elementwise tensor-algebra ops (backend.h, "tensor algebra for
// variants"): binary (and add), map, reduceRows, softmax, splitHeads, mergeHeads, copyRows. Each
// records one dispatch per segment within which every operand stays in one storage buffer (one
// segment unless a tensor is split); operands are RowViews, so reshaped tensors work.
// Elementwise ops view tensors as flat runs of values (any reshape, split or not).
#include "buffer.h"
#include "op_support.h"
#include "row_view.h"
#include "vk_error.h"
#include "vulkan_backend.h"
#include "vulkan_storage.h"

#include <array>
#include <limits>
#include <optional>
#include <string>

namespace headlight::vk {
namespace {

constexpr int64_t kAnyLength = std::numeric_limits<int64_t>::max() / 4; // grid-stride kernels

struct BinaryPush {
    uint32_t n, aBase, bBase, outBase, bStart, bPeriod, cols;
};
struct MapPush {
    uint32_t n, xBase, outBase;
    float alpha, beta;
};
struct ReducePush {
    uint32_t N, xBase, outBase;
};
struct SoftmaxPush {
    uint32_t N, xBase, outBase;
    uint32_t hasMask, maskBase, maskStart, maskPeriod;
    uint32_t hasSink;
    float sink;
};
struct HeadsPush {
    uint32_t heads, rows, d, tokenBase, tokenStride, headBase, headStride;
};
struct CopyPush {
    uint32_t n, inBase, outBase;
};

// How binary.comp finds b's value for an element of a (its BMODE).
enum class BinaryMode : uint32_t { Aligned, Repeat, PerRow };

void requireSameSize(const char* op, const DeviceTensor& a, const DeviceTensor& b) {
    if (a.size() != b.size())
        badShape(op, "shapes " + shapeString(a.shape()) + " and " + shapeString(b.shape()) +
                         " differ in size");
}

// The mode of binary(a, b) as backend.h defines it (per row wins where both forms fit).
BinaryMode binaryMode(const DeviceTensor& a, const DeviceTensor& b) {
    const int64_t cols = lastDim(a), rows = a.size() / std::max<int64_t>(cols, 1);
    if (b.shape().size() == 2 && b.dim(1) == 1 && b.dim(0) == rows && cols != 1)
        return BinaryMode::PerRow;
    if (b.size() == 0 || a.size() % b.size() != 0 || lastDim(b) != cols)
        badShape("binary",
                 "b " + shapeString(b.shape()) + " does not tile a " + shapeString(a.shape()));
    return b.size() == a.size() ? BinaryMode::Aligned : BinaryMode::Repeat;
}
} // namespace

void VulkanBackend::binary(const DeviceTensor& a, const DeviceTensor& b, BinaryOp op,
                           DeviceTensor& out) {
    requireSameSize("binary", a, out);
    const BinaryMode mode = binaryMode(a, b);
    if (a.size() == 0) return;
    // Per row: rows of a against values of b. Otherwise flat: elements against elements.
    const int64_t cols = mode == BinaryMode::PerRow ? lastDim(a) : 1;
    const RowView av(use(a), cols, "binary"), ov(use(out), cols, "binary"), bv(use(b), 1, "binary");
    if (mode == BinaryMode::Repeat && !bv.singleBuffer())
        throw VulkanError("binary: a broadcast b " + shapeString(b.shape()) +
                          " must fit one storage binding");
    const auto& shader =
        pipeline("binary", {config_.elementwiseWorkgroup, uint32_t(op), uint32_t(mode)});
    const bool bWalks = mode != BinaryMode::Repeat; // b's position follows a's
    for (const RowSegment& s :
         viewSegments(av.rows(), {{&av}, {&ov}, {bWalks ? &bv : &av}}, kAnyLength)) {
        const auto ap = av.at(s.begin), op_ = ov.at(s.begin), bp = bv.at(bWalks ? s.begin : 0);
        const int64_t n = s.rows() * cols;
        const BinaryPush push{uint32_t(n),
                              ap.element,
                              bp.element,
                              op_.element,
                              uint32_t(s.begin % b.size()),
                              uint32_t(b.size()),
                              uint32_t(cols)};
        const std::array<Binding, 3> bindings{{{ap.buffer}, {bp.buffer}, {op_.buffer, true}}};
        recorder_.dispatch(shader, bindings, push, groupsFor(n, config_.elementwiseWorkgroup));
    }
}

void VulkanBackend::map(const DeviceTensor& x, MapOp op, float alpha, float beta,
                        DeviceTensor& out) {
    requireSameSize("map", x, out);
    if (x.size() == 0) return;
    const RowView xv(use(x), 1, "map"), ov(use(out), 1, "map");
    const auto& shader = pipeline("map", {config_.elementwiseWorkgroup, uint32_t(op)});
    for (const RowSegment& s : viewSegments(x.size(), {{&xv}, {&ov}}, kAnyLength)) {
        const auto xp = xv.at(s.begin), op_ = ov.at(s.begin);
        const MapPush push{uint32_t(s.rows()), xp.element, op_.element, alpha, beta};
        const std::array<Binding, 2> bindings{{{xp.buffer}, {op_.buffer, true}}};
        recorder_.dispatch(shader, bindings, push,
                           groupsFor(s.rows(), config_.elementwiseWorkgroup));
    }
}

void VulkanBackend::reduceRows(const DeviceTensor& x, bool sum, DeviceTensor& out) {
    const int64_t N = lastDim(x), rows = N == 0 ? 0 : x.size() / N;
    if (out.size() != rows) badShape("reduceRows", "out must hold one value per row");
    if (rows == 0) return;
    const RowView xv(use(x), N, "reduceRows"), ov(use(out), 1, "reduceRows");
    const auto& shader = pipeline("reduce_rows", {config_.rowWorkgroup, sum});
    for (const RowSegment& s : viewSegments(rows, {{&xv}, {&ov}})) {
        const auto xp = xv.at(s.begin), op = ov.at(s.begin);
        const ReducePush push{uint32_t(N), xp.element, op.element};
        const std::array<Binding, 2> bindings{{{xp.buffer}, {op.buffer, true}}};
        recorder_.dispatch(shader, bindings, push, 1, uint32_t(s.rows()));
    }
}

void VulkanBackend::softmax(const DeviceTensor& x, const DeviceTensor* mask, DeviceTensor& out) {
    dispatchSoftmax(x, mask, std::nullopt, out);
}

void VulkanBackend::sinkSoftmax(const DeviceTensor& x, const DeviceTensor* mask, float sink,
                                DeviceTensor& out) {
    dispatchSoftmax(x, mask, sink, out);
}

// softmax.comp, with one more logit per row when a sink is given.
void VulkanBackend::dispatchSoftmax(const DeviceTensor& x, const DeviceTensor* mask,
                                    std::optional<float> sink, DeviceTensor& out) {
    requireSameSize("softmax", x, out);
    const int64_t N = lastDim(x), rows = N == 0 ? 0 : x.size() / N;
    const int64_t maskRows = mask && N > 0 ? mask->size() / N : 0;
    if (mask && (lastDim(*mask) != N || maskRows == 0 || rows % maskRows != 0))
        badShape("softmax", "mask " + shapeString(mask->shape()) + " does not tile x " +
                                shapeString(x.shape()));
    if (rows == 0) return;
    const RowView xv(use(x), N, "softmax"), ov(use(out), N, "softmax");
    std::optional<RowView> mv;
    if (mask) mv.emplace(use(*mask), N, "softmax");
    // A mask in one buffer repeats by index; a split one must be as tall as x and walk with it.
    const bool maskWalks = mv && !mv->singleBuffer();
    if (maskWalks && maskRows != rows)
        throw VulkanError("softmax: a repeating mask " + shapeString(mask->shape()) +
                          " must fit one storage binding");
    const auto& shader = pipeline("softmax", {config_.rowWorkgroup});
    for (const RowSegment& s : viewSegments(rows, {{&xv}, {&ov}, {maskWalks ? &*mv : &xv}})) {
        const auto xp = xv.at(s.begin), op = ov.at(s.begin);
        const auto mp = mv ? mv->at(maskWalks ? s.begin : 0) : RowView::At{placeholder_.get(), 0};
        const SoftmaxPush push{uint32_t(N),
                               xp.element,
                               op.element,
                               mask != nullptr,
                               mp.element,
                               uint32_t(maskWalks ? 0 : s.begin % std::max<int64_t>(maskRows, 1)),
                               uint32_t(maskWalks ? rows : std::max<int64_t>(maskRows, 1)),
                               sink.has_value(),
                               sink.value_or(0.0f)};
        const std::array<Binding, 3> bindings{{{xp.buffer}, {mp.buffer}, {op.buffer, true}}};
        recorder_.dispatch(shader, bindings, push, 1, uint32_t(s.rows()));
    }
}

void VulkanBackend::splitHeads(const DeviceTensor& x, int heads, DeviceTensor& out) {
    requireSameSize("splitHeads", x, out);
    const int64_t width = lastDim(x);
    if (heads <= 0 || width % heads != 0)
        badShape("splitHeads",
                 std::to_string(heads) + " heads do not divide x " + shapeString(x.shape()));
    if (x.size() == 0) return;
    const RowView tokens(use(x), width, "splitHeads"), split(use(out), width / heads, "splitHeads");
    dispatchHeads(tokens, split, heads, true);
}

void VulkanBackend::mergeHeads(const DeviceTensor& x, DeviceTensor& out) {
    requireSameSize("mergeHeads", x, out);
    const auto& s = x.shape();
    if (s.size() != 2 && s.size() != 3)
        badShape("mergeHeads", "expected a 2-D or 3-D tensor, got " + shapeString(s));
    const int64_t heads = s.size() == 3 ? s[0] : 1, d = s.back();
    if (lastDim(out) != heads * d)
        badShape("mergeHeads",
                 "out " + shapeString(out.shape()) + " does not fit x " + shapeString(s));
    if (x.size() == 0) return;
    const RowView split(use(x), d, "mergeHeads"), tokens(use(out), heads * d, "mergeHeads");
    dispatchHeads(tokens, split, heads, false);
}

// Every head at once when both tensors sit in one buffer each; otherwise head by head, tokens in
// segments that stay within one buffer of each.
void VulkanBackend::dispatchHeads(const RowView& tokens, const RowView& split, int64_t heads,
                                  bool toSplit) {
    const int64_t T = tokens.rows(), d = split.cols();
    const auto& shader = pipeline("heads", {config_.elementwiseWorkgroup, toSplit});
    const bool whole = tokens.singleBuffer() && split.singleBuffer();
    for (int64_t h = 0; h < (whole ? 1 : heads); ++h)
        for (const RowSegment& s : viewSegments(T, {{&tokens}, {&split, h * T}}, kAnyLength)) {
            const auto tp = tokens.at(s.begin), sp = split.at(h * T + s.begin);
            const int64_t count = whole ? heads : 1;
            const HeadsPush push{uint32_t(count),
                                 uint32_t(s.rows()),
                                 uint32_t(d),
                                 uint32_t(tp.element + h * d),
                                 uint32_t(tokens.cols()),
                                 sp.element,
                                 uint32_t(T * d)};
            const std::array<Binding, 2> bindings{
                {{toSplit ? tp.buffer : sp.buffer}, {toSplit ? sp.buffer : tp.buffer, true}}};
            recorder_.dispatch(shader, bindings, push,
                               groupsFor(count * s.rows() * d, config_.elementwiseWorkgroup));
        }
}

void VulkanBackend::copyRows(const DeviceTensor& src, int64_t srcRow, int64_t rows,
                             DeviceTensor& dst, int64_t dstRow) {
    const int64_t N = lastDim(src);
    const int64_t srcRows = N == 0 ? 0 : src.size() / N, dstRows = N == 0 ? 0 : dst.size() / N;
    if (lastDim(dst) != N || srcRow < 0 || dstRow < 0 || rows < 0 || srcRow + rows > srcRows ||
        dstRow + rows > dstRows)
        badShape("copyRows", "rows out of range");
    if (rows == 0 || N == 0) return;
    // Flat runs of values: rows of any length copy alike, whatever the storage's own rows.
    const RowView sv(use(src), 1, "copyRows"), dv(use(dst), 1, "copyRows");
    const auto& shader = pipeline("copy", {config_.elementwiseWorkgroup});
    for (const RowSegment& s :
         viewSegments(rows * N, {{&sv, srcRow * N}, {&dv, dstRow * N}}, kAnyLength)) {
        const auto sp = sv.at(srcRow * N + s.begin), dp = dv.at(dstRow * N + s.begin);
        const CopyPush push{uint32_t(s.rows()), sp.element, dp.element};
        const std::array<Binding, 2> bindings{{{sp.buffer}, {dp.buffer, true}}};
        recorder_.dispatch(shader, bindings, push,
                           groupsFor(s.rows(), config_.elementwiseWorkgroup));
    }
}
} // namespace headlight::vk
