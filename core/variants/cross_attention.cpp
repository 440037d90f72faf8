#include "variants/cross_attention.h"

namespace headlight::variants {

DeviceTensor headScores(Backend& backend, const CrossAttentionLayer& layer, const DeviceTensor& q,
                        const DeviceTensor& kh) {
    const int64_t rows = q.dim(0);
    DeviceTensor qh = backend.allocate({layer.heads, rows, layer.headDim});
    backend.splitHeads(q, layer.heads, qh);
    DeviceTensor scores = backend.allocate({layer.heads, rows, kh.dim(1)});
    backend.matmul(qh, kh, true, layer.scale, scores);
    return scores;
}
} // namespace headlight::variants
