#include "variants/funnel_pooling.h"

#include <algorithm>

namespace headlight::variants {
namespace {

// funnel_merge [blocks, T]: the row of block b that input token t was pooled into, ⌊t / s^b⌋.
Tensor mergeMap(int64_t tokens, int64_t blocks, int stride) {
    Tensor merge({blocks, tokens});
    for (int64_t t = 0; t < tokens; ++t) {
        int64_t row = t;
        for (int64_t b = 0; b < blocks; ++b, row /= stride)
            merge.values()[std::size_t(b * tokens + t)] = float(row);
    }
    return merge;
}

// P [⌈T/s⌉, T] of the strided mean pooling.
Tensor poolingMatrix(int64_t tokens, int stride) {
    const int64_t rows = (tokens + stride - 1) / stride;
    Tensor pooling({rows, tokens}, 0.0f);
    for (int64_t i = 0; i < rows; ++i) {
        const int64_t first = i * stride, last = std::min<int64_t>(first + stride, tokens);
        for (int64_t j = first; j < last; ++j)
            pooling.values()[std::size_t(i * tokens + j)] = 1.0f / float(last - first);
    }
    return pooling;
}

DeviceTensor pool(Backend& backend, const DeviceTensor& x, int stride) {
    const DeviceTensor pooling = backend.upload(poolingMatrix(x.dim(0), stride));
    DeviceTensor pooled = backend.allocate({pooling.dim(0), x.dim(1)});
    backend.matmul(pooling, x, false, 1.0f, pooled);
    return pooled;
}

// Block `block`'s rows back on the input tokens [T, D]: token t reads row merge[block, t].
DeviceTensor upsample(Backend& backend, const DeviceTensor& x, const Tensor& merge, int64_t block) {
    const int64_t tokens = merge.dim(1);
    std::vector<int32_t> rows(static_cast<std::size_t>(tokens));
    for (int64_t t = 0; t < tokens; ++t)
        rows[std::size_t(t)] = int32_t(merge.values()[std::size_t(block * tokens + t)]);
    DeviceTensor out = backend.allocate({tokens, x.dim(1)});
    backend.gatherRows(x, rows, out);
    return out;
}
} // namespace

FunnelOutcome runFunnel(Backend& backend, const FunnelLayers& funnel, const DeviceTensor& input,
                        std::vector<DeviceTensor>* hidden) {
    const std::vector<int>& blocks = funnel.blocks;
    const int64_t last = int64_t(blocks.size()) - 1;
    FunnelOutcome outcome{
        {}, Tensor({funnel.layers}), mergeMap(input.dim(0), last + 1, funnel.stride)};
    DeviceTensor x = input, full; // full: block 0's output, the decoder's residual
    int layer = 0;
    for (int64_t b = 0; b <= last; ++b) {
        for (int i = 0; i < blocks[std::size_t(b)]; ++i, ++layer) {
            x = b > 0 && i == 0 ? funnel.applyPooling(layer, pool(backend, x, funnel.stride), x)
                                : funnel.apply({SublayerKind::Attention, layer, false}, x);
            if (!funnel.dropFfn) x = funnel.apply({SublayerKind::Ffn, layer, true}, x);
            outcome.lengths.values()[std::size_t(layer)] = float(x.dim(0));
            if (hidden) hidden->push_back(upsample(backend, x, outcome.merge, b));
        }
        if (b == 0) full = x;
    }
    outcome.out = x;
    if (last == 0) return outcome;
    outcome.out = upsample(backend, x, outcome.merge, last);
    backend.add(outcome.out, full, outcome.out);
    if (hidden) hidden->back() = outcome.out;
    return outcome;
}

DeviceTensor poolingAttention(Backend& backend, const CrossAttentionLayer& layer,
                              const DeviceTensor& queries, const DeviceTensor& source,
                              DeviceTensor* scores, DeviceTensor* probabilities) {
    const CrossProjection p = layer.project(queries, source);
    const DeviceTensor s = headScores(backend, layer, p.q, p.kh);
    const int64_t heads = s.dim(0), rows = s.dim(1), keys = s.dim(2);
    DeviceTensor weights = backend.allocate({heads, rows, keys});
    DeviceTensor flat = weights.reshaped({heads * rows, keys});
    backend.softmax(s.reshaped({heads * rows, keys}), nullptr, flat);
    const DeviceTensor out = layer.output(weights, p.vh);
    if (scores) *scores = s;
    if (probabilities) *probabilities = weights;
    return out;
}
} // namespace headlight::variants
