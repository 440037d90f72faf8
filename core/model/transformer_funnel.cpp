// Item 20: the Funnel Transformer (Dai et al. 2020). The layers form blocks
// (BlockSpec::funnelBlocks); before block b > 0 the hidden sequence is mean-pooled with stride s,
//
//   pooled = P x,   P [⌈T/s⌉, T],   row i = the mean of rows s·i … s·i + s − 1
//
// (a trailing shorter group averaged alone),
// and that block's first attention takes its queries (and its residual) from the pooled rows and
// its keys and values from the unpooled ones ("pool-query-only", §2.2); the block's later layers
// run at the pooled length. With more than one block the last block's rows are up-sampled by
// repetition (token t reads row ⌊t / s^(B−1)⌋) and block 0's output is added, the paper's
// residual from the full-resolution layers (§2.3, without its two decoder layers). Pooling is a
// matmul and up-sampling a row gather, so every backend runs it. Mirrors tools/zoo/model.py.
#include "model/transformer.h"

#include <cmath>

namespace headlight {
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
} // namespace

DeviceTensor TransformerModel::runFunnel(DeviceTensor x, Pass& pass,
                                         std::vector<PendingCapture>& pending,
                                         std::vector<DeviceTensor>* hidden, Trace& trace) const {
    const std::vector<int>& blocks = block_.funnelBlocks;
    const int64_t last = int64_t(blocks.size()) - 1;
    const Tensor merge = mergeMap(x.dim(0), last + 1, block_.funnelStride);
    Tensor lengths({spec_.layers});
    DeviceTensor full; // block 0's output, the decoder's residual
    int layer = 0;
    for (int64_t b = 0; b <= last; ++b) {
        for (int i = 0; i < blocks[std::size_t(b)]; ++i, ++layer) {
            PendingCapture& capture = pending[std::size_t(layer)];
            x = b > 0 && i == 0
                    ? poolingSublayer(layer, x, capture)
                    : applySublayer({SublayerKind::Attention, layer, false}, x, pass, capture);
            if (!pass.variant.dropFfn)
                x = applySublayer({SublayerKind::Ffn, layer, true}, x, pass, capture);
            lengths.values()[std::size_t(layer)] = float(x.dim(0));
            if (hidden) hidden->push_back(upsample(x, merge, b));
        }
        if (b == 0) full = x;
    }
    trace.internals["funnel_length"] = lengths;
    trace.internals["funnel_merge"] = merge;
    if (last == 0) return x;
    DeviceTensor out = upsample(x, merge, last);
    backend_.add(out, full, out);
    if (hidden) hidden->back() = out;
    return out;
}

DeviceTensor TransformerModel::pool(const DeviceTensor& x) const {
    const DeviceTensor pooling = backend_.upload(poolingMatrix(x.dim(0), block_.funnelStride));
    DeviceTensor pooled = backend_.allocate({pooling.dim(0), x.dim(1)});
    backend_.matmul(pooling, x, false, 1.0f, pooled);
    return pooled;
}

// Block `block`'s rows back on the input tokens [T, D]: token t reads row merge[block, t].
DeviceTensor TransformerModel::upsample(const DeviceTensor& x, const Tensor& merge,
                                        int64_t block) const {
    const int64_t tokens = merge.dim(1);
    std::vector<int32_t> rows(static_cast<std::size_t>(tokens));
    for (int64_t t = 0; t < tokens; ++t)
        rows[std::size_t(t)] = int32_t(merge.values()[std::size_t(block * tokens + t)]);
    DeviceTensor out = backend_.allocate({tokens, x.dim(1)});
    backend_.gatherRows(x, rows, out);
    return out;
}

// The block's first attention sub-layer, its residual stream continuing from the pooled rows; the
// unpooled keys and values pass through the same norm as the queries where the sub-layer reads
// N(·).
DeviceTensor TransformerModel::poolingSublayer(int layer, const DeviceTensor& x,
                                               PendingCapture& capture) const {
    const Sublayer sublayer{SublayerKind::Attention, layer, false};
    return residual(sublayer, pool(x), [&](const DeviceTensor& queries) {
        if (!normsSublayerInput())
            return attendPooled(layers_[std::size_t(layer)], queries, x, capture);
        DeviceTensor keys = backend_.allocate(x.shape());
        normalize(sublayerNorm(sublayer), x, keys);
        return attendPooled(layers_[std::size_t(layer)], queries, keys, capture);
    });
}

// The pooling attention: queries from the pooled rows x [T', D], keys and values from the
// unpooled `source` [T, D]; plain softmax over a [H, T', T] map (a funnel refuses other options).
DeviceTensor TransformerModel::attendPooled(const Layer& layer, const DeviceTensor& x,
                                            const DeviceTensor& source,
                                            PendingCapture& capture) const {
    const float scale = spec_.scaleAttnWeights ? 1.0f / std::sqrt(float(spec_.headDim)) : 1.0f;
    const CrossProjection p = projectCross(layer, x, source);
    const DeviceTensor scores = headScores(p.q, p.kh, scale);
    const int64_t heads = scores.dim(0), rows = scores.dim(1), keys = scores.dim(2);
    DeviceTensor probabilities = backend_.allocate({heads, rows, keys});
    DeviceTensor flat = probabilities.reshaped({heads * rows, keys});
    backend_.softmax(scores.reshaped({heads * rows, keys}), nullptr, flat);
    const DeviceTensor out = attendValues(layer, probabilities, p.vh);
    if (capture.wantScores) capture.scores = scores;
    if (capture.wantProbabilities) capture.probabilities = probabilities;
    return out;
}
} // namespace headlight
