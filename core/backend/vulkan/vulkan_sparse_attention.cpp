// VulkanBackend::sparseAttention: one workgroup per (query, head) of sparse_attention.comp, the
// pattern's rows of keys (and the ALiBi slopes) uploaded with the dispatch.
#include "buffer.h"
#include "row_view.h"
#include "vk_error.h"
#include "vulkan_backend.h"
#include "vulkan_storage.h"

#include <array>
#include <bit>
#include <optional>
#include <string>
#include <vector>

namespace headlight::vk {
namespace {

struct SparseAttentionPush {
    uint32_t T, group, patternHeads, entries;
    uint32_t keysAt, slopesAt, hasSlopes, writeWeights;
    float scale;
    uint32_t qBase, kBase, vBase, contextBase, weightsBase;
};

// rowStart, then keys, then the slopes' bits: the shader's one `pattern` buffer.
std::vector<uint32_t> patternWords(const SparsePattern& pattern, std::span<const float> slopes) {
    std::vector<uint32_t> words(pattern.rowStart.begin(), pattern.rowStart.end());
    words.insert(words.end(), pattern.keys.begin(), pattern.keys.end());
    for (const float slope : slopes)
        words.push_back(std::bit_cast<uint32_t>(slope));
    return words;
}
} // namespace

void VulkanBackend::sparseAttention(const DeviceTensor& q, const DeviceTensor& k,
                                    const DeviceTensor& v, const SparsePattern& pattern,
                                    float scale, std::span<const float> alibiSlopes,
                                    DeviceTensor& context, DeviceTensor* weights) {
    checkSparseAttention(q, k, v, pattern, alibiSlopes, context, weights);
    const int64_t heads = q.dim(0), tokens = q.dim(1), dim = q.dim(2);
    if (context.size() == 0) return;
    if (tokens > 65535 || heads > 65535)
        throw VulkanError("sparseAttention: at most 65535 tokens and heads per dispatch");
    const RowView qv(use(q), dim, "sparseAttention"), kv(use(k), dim, "sparseAttention"),
        vv(use(v), dim, "sparseAttention"), cv(use(context), dim, "sparseAttention");
    for (const RowView* view : {&qv, &kv, &vv, &cv})
        if (!view->singleBuffer())
            throw VulkanError("sparseAttention: q, k, v and context must each fit one storage "
                              "binding (T = " +
                              std::to_string(tokens) + ")");
    std::optional<RowView> wv; // absent weights (or none to write) bind the placeholder
    if (weights && weights->size() > 0) {
        wv.emplace(use(*weights), weights->size(), "sparseAttention");
        if (!wv->singleBuffer())
            throw VulkanError("sparseAttention: the weights must fit one storage binding");
    }
    const std::vector<uint32_t> words = patternWords(pattern, alibiSlopes);
    const Buffer& patternBuffer = transient(std::as_bytes(std::span(words)));
    const auto keysAt = uint32_t(pattern.rowStart.size());
    const SparseAttentionPush push{uint32_t(tokens),
                                   uint32_t(heads / k.dim(0)),
                                   uint32_t(pattern.heads),
                                   uint32_t(pattern.entries()),
                                   keysAt,
                                   keysAt + uint32_t(pattern.entries()),
                                   !alibiSlopes.empty(),
                                   wv.has_value(),
                                   scale,
                                   qv.at(0).element,
                                   kv.at(0).element,
                                   vv.at(0).element,
                                   cv.at(0).element,
                                   wv ? wv->at(0).element : 0};
    const auto& shader = pipeline("sparse_attention", {config_.attentionWorkgroup, uint32_t(dim)});
    const std::array<Binding, 6> bindings{
        {{qv.at(0).buffer},
         {kv.at(0).buffer},
         {vv.at(0).buffer},
         {&patternBuffer},
         {cv.at(0).buffer, true},
         {wv ? wv->at(0).buffer : placeholder_.get(), wv.has_value()}}};
    recorder_.dispatch(shader, bindings, push, uint32_t(tokens), uint32_t(heads));
}
} // namespace headlight::vk
