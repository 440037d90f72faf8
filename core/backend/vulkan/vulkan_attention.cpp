// VulkanBackend::attention: one workgroup per (head, query) row of attention.comp. Captured
// scores and probs ([heads, T, T], 800 MB at heads 12 and T = 4096) are split by rows over
// several storage buffers when needed; the flattened rows h·T + i are dispatched in segments
// that stay within one buffer of each.
#include "buffer.h"
#include "op_support.h"
#include "vk_error.h"
#include "vulkan_backend.h"
#include "vulkan_storage.h"

#include <array>
#include <string>

namespace headlight::vk {
namespace {

struct AttentionPush {
    uint32_t T, heads, group;
    uint32_t causal, window, hasKeyValid;
    float scale;
    uint32_t r0;
    uint32_t captureScores, scoresRow0;
    uint32_t captureProbs, probsRow0;
    uint32_t qRow0, kRow0, vRow0, contextRow0;
    float softcap;
};

void checkAttentionShapes(const DeviceTensor& q, const DeviceTensor& k, const DeviceTensor& v,
                          const AttentionParams& p, const DeviceTensor& context,
                          const DeviceTensor* scores, const DeviceTensor* probs) {
    if (p.heads <= 0 || p.kvHeads <= 0 || p.heads % p.kvHeads != 0 || p.headDim <= 0)
        badShape("attention", "heads " + std::to_string(p.heads) + " / kvHeads " +
                                  std::to_string(p.kvHeads) + " / headDim " +
                                  std::to_string(p.headDim) + " are inconsistent");
    const int64_t T = q.size() / (int64_t(p.heads) * p.headDim);
    requireShape("attention", "q", q, {T, int64_t(p.heads) * p.headDim});
    requireShape("attention", "k", k, {T, int64_t(p.kvHeads) * p.headDim});
    requireShape("attention", "v", v, {T, int64_t(p.kvHeads) * p.headDim});
    requireShape("attention", "context", context, {T, int64_t(p.heads) * p.headDim});
    if (scores) requireShape("attention", "scores", *scores, {p.heads, T, T});
    if (probs) requireShape("attention", "probs", *probs, {p.heads, T, T});
    if (!p.keyValid.empty() && int64_t(p.keyValid.size()) != T)
        badShape("attention", "keyValid has " + std::to_string(p.keyValid.size()) +
                                  " entries for " + std::to_string(T) + " tokens");
}
} // namespace

void VulkanBackend::attention(const DeviceTensor& q, const DeviceTensor& k, const DeviceTensor& v,
                              const AttentionParams& p, DeviceTensor& context, DeviceTensor* scores,
                              DeviceTensor* probs) {
    checkAttentionShapes(q, k, v, p, context, scores, probs);
    const int64_t T = q.size() / (int64_t(p.heads) * p.headDim);
    if (T == 0) return;
    for (const DeviceTensor* t :
         {&q, &k, &v, static_cast<const DeviceTensor*>(&context),
          static_cast<const DeviceTensor*>(scores), static_cast<const DeviceTensor*>(probs)})
        if (t) requireStorageRows("attention", *t);
    const VulkanStorage &qs = use(q), &ks = use(k), &vs = use(v), &cs = use(context);
    for (const VulkanStorage* whole : {&qs, &ks, &vs, &cs})
        if (!whole->singleChunk())
            throw VulkanError(
                "attention: q, k, v and context must each fit one storage binding (T = " +
                std::to_string(T) + ")");
    const VulkanStorage* ss = scores ? &use(*scores) : nullptr;
    const VulkanStorage* ps = probs ? &use(*probs) : nullptr;

    const std::vector<uint32_t> valid(p.keyValid.begin(), p.keyValid.end());
    const Buffer& validBuffer =
        valid.empty() ? *placeholder_ : transient(std::as_bytes(std::span(valid)));
    const auto& shader = pipeline("attention", {config_.attentionWorkgroup, uint32_t(p.headDim)});
    const auto qp = qs.locate(0), kp = ks.locate(0), vp = vs.locate(0), cp = cs.locate(0);
    std::vector<RowOperand> captures;
    for (const VulkanStorage* capture : {ss, ps})
        if (capture) captures.push_back({capture});
    for (const RowSegment& s : rowSegments(T * p.heads, captures)) {
        const auto sp = ss ? ss->locate(s.begin) : VulkanStorage::Location{placeholder_.get(), 0};
        const auto pp = ps ? ps->locate(s.begin) : VulkanStorage::Location{placeholder_.get(), 0};
        const AttentionPush push{uint32_t(T),
                                 uint32_t(p.heads),
                                 uint32_t(p.heads / p.kvHeads),
                                 p.causal,
                                 uint32_t(std::max(p.slidingWindow, 0)),
                                 !valid.empty(),
                                 p.scale,
                                 uint32_t(s.begin),
                                 ss != nullptr,
                                 sp.row,
                                 ps != nullptr,
                                 pp.row,
                                 qp.row,
                                 kp.row,
                                 vp.row,
                                 cp.row,
                                 p.softcap};
        // An absent capture binds the placeholder, which the shader then never writes.
        const std::array<Binding, 7> bindings{{{qp.buffer},
                                               {kp.buffer},
                                               {vp.buffer},
                                               {&validBuffer},
                                               {cp.buffer, true},
                                               {sp.buffer, ss != nullptr},
                                               {pp.buffer, ps != nullptr}}};
        recorder_.dispatch(shader, bindings, push, uint32_t(s.rows()));
    }
}
} // namespace headlight::vk
