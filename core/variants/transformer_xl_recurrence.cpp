#include "variants/transformer_xl_recurrence.h"

#include "variants/position_bias.h"

#include <algorithm>
#include <limits>

namespace headlight::variants {
namespace {

// (q_i + v)·r_δ · scale [H, S, K] by Transformer-XL's shift: the table holds a zero row, then
// distances K−1 … 0, so that each head's [S, K+1] block, read as [K+1, S] less its first row and
// read back as [S, K], has distance K − S + i − j at (i, j). Entries with δ < 0 (the future,
// masked later) read other cells.
DeviceTensor relativeScores(Backend& backend, const CrossAttentionLayer& layer,
                            const DeviceTensor& q, int64_t keys, int64_t width) {
    const int64_t rows = q.dim(0), heads = layer.heads, d = layer.headDim;
    DeviceTensor position = backend.allocate(q.shape());
    backend.add(q, layer.v, position);
    DeviceTensor ph = backend.allocate({heads, rows, d});
    backend.splitHeads(position, int(heads), ph);
    const Tensor sinusoid = sinusoidalTable(keys, width);
    Tensor table({keys + 1, width});
    for (int64_t r = 1; r <= keys; ++r)
        std::copy_n(sinusoid.values().begin() + (keys - r) * width, width,
                    table.values().begin() + r * width);
    const DeviceTensor r = layer.relative(backend.upload(table));
    DeviceTensor rh = backend.allocate({heads, keys + 1, d});
    backend.splitHeads(r, int(heads), rh);
    DeviceTensor padded = backend.allocate({heads, rows, keys + 1});
    backend.matmul(ph, rh, true, layer.scale, padded);
    const DeviceTensor blocks = padded.reshaped({heads * (keys + 1), rows});
    DeviceTensor shifted = backend.allocate({heads * keys, rows});
    for (int64_t h = 0; h < heads; ++h)
        backend.copyRows(blocks, h * (keys + 1) + 1, keys, shifted, h * keys);
    return shifted.reshaped({heads, rows, keys});
}

// Query i of the segment sees every compressed slot, and a memory or segment row when the
// masking rule allows its position for the query's.
Tensor segmentMask(const Segments& segments, const KeyMask& rule, int64_t rows, int64_t front,
                   int64_t keys) {
    Tensor mask({rows, keys});
    const int64_t first =
        segments.start + rows - (keys - front); // the oldest memory row's position
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < keys; ++j) {
            const bool allowed = j < front || rule.allows(segments.start + i, first + (j - front));
            mask.values()[std::size_t(i * keys + j)] = float(allowed);
        }
    return mask;
}

void recordSegment(Backend& backend, const Segments& segments, int64_t front,
                   const DeviceTensor& scores, const DeviceTensor& probabilities,
                   const SegmentRecord& record) {
    const bool slots = record.internals && segments.shape.compressed > 0;
    if (!record.wantScores && !record.wantProbabilities && !slots) return;
    const int64_t heads = scores.dim(0), rows = scores.dim(1), keys = scores.dim(2),
                  tokens = segments.tokens;
    const int64_t first = segments.start + rows - (keys - front),
                  capacity = segments.shape.compressed;
    const Tensor p = backend.download(probabilities);
    const Tensor s = record.wantScores ? backend.download(scores) : Tensor();
    if (record.wantProbabilities && record.probabilities->empty())
        *record.probabilities = Tensor({heads, tokens, tokens});
    if (record.wantScores && record.scores->empty())
        *record.scores = Tensor({heads, tokens, tokens}, std::numeric_limits<float>::lowest());
    Tensor& compressed = (*record.hostInternals)["compressed_attention"];
    if (slots && compressed.empty()) compressed = Tensor({heads, tokens, capacity});
    if (!slots) record.hostInternals->erase("compressed_attention");
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < rows; ++i) {
            const int64_t query = segments.start + i;
            for (int64_t j = 0; j < keys; ++j) {
                const std::size_t from = std::size_t((h * rows + i) * keys + j);
                if (j < front) {
                    if (slots)
                        compressed.values()[std::size_t((h * tokens + query) * capacity + capacity -
                                                        front + j)] = p.values()[from];
                    continue;
                }
                const std::size_t to =
                    std::size_t((h * tokens + query) * tokens + first + j - front);
                if (record.wantProbabilities) record.probabilities->values()[to] = p.values()[from];
                if (record.wantScores && j <= keys - rows + i)
                    record.scores->values()[to] = s.values()[from];
            }
        }
}
} // namespace

SegmentOutcome runSegments(Backend& backend, Segments& segments, const DeviceTensor& x,
                           const SegmentStack& stack, std::vector<DeviceTensor>* hidden) {
    const int64_t tokens = x.dim(0), width = x.dim(1), length = segments.shape.segment;
    segments.tokens = tokens;
    SegmentOutcome outcome{backend.allocate(x.shape()), Tensor({tokens})};
    std::vector<DeviceTensor> layerStates; // hidden states of the whole sequence, per layer
    for (int64_t start = 0; start < tokens; start += length) {
        const int64_t rows = std::min<int64_t>(length, tokens - start);
        segments.start = start;
        segments.last = start + rows >= tokens;
        DeviceTensor piece = backend.allocate({rows, width});
        backend.copyRows(x, start, rows, piece, 0);
        std::vector<DeviceTensor> pieceStates;
        const DeviceTensor y = stack(piece, hidden ? &pieceStates : nullptr);
        backend.copyRows(y, 0, rows, outcome.out, start);
        for (std::size_t l = 0; l < pieceStates.size(); ++l) {
            if (layerStates.size() <= l) layerStates.push_back(backend.allocate(x.shape()));
            backend.copyRows(pieceStates[l], 0, rows, layerStates[l], start);
        }
        std::fill_n(outcome.segment.values().begin() + start, rows, float(start / length));
    }
    if (hidden) hidden->insert(hidden->end(), layerStates.begin(), layerStates.end());
    return outcome;
}

DeviceTensor attendSegment(Backend& backend, Segments& segments, int index,
                           const CrossAttentionLayer& layer, const KeyMask& rule,
                           const DeviceTensor& x, const SegmentRecord& record) {
    if (segments.memories.size() <= std::size_t(index))
        segments.memories.resize(std::size_t(index) + 1);
    SegmentMemory& memory = segments.memories[std::size_t(index)];
    const DeviceTensor extended = stackRows(backend, {memory.compressed, memory.recent, x});
    const int64_t rows = x.dim(0), keys = extended.dim(0), front = rowsOf(memory.compressed);
    const int64_t heads = layer.heads;
    const bool relative = bool(layer.relative);

    const CrossProjection p = layer.project(x, extended);
    DeviceTensor content = p.q;
    if (relative) {
        content = backend.allocate(p.q.shape());
        backend.add(p.q, layer.u, content);
    }
    DeviceTensor scores = headScores(backend, layer, content, p.kh);
    DeviceTensor flatScores = scores.reshaped({heads * rows, keys});
    if (relative)
        backend.binary(
            flatScores,
            relativeScores(backend, layer, p.q, keys, x.dim(1)).reshaped({heads * rows, keys}),
            BinaryOp::Add, flatScores);
    const DeviceTensor mask = backend.upload(segmentMask(segments, rule, rows, front, keys));
    DeviceTensor probabilities = backend.allocate({heads, rows, keys});
    DeviceTensor flatProbabilities = probabilities.reshaped({heads * rows, keys});
    backend.softmax(flatScores, &mask, flatProbabilities);
    const DeviceTensor out = layer.output(probabilities, p.vh);
    recordSegment(backend, segments, front, scores, probabilities, record);
    if (!segments.last) remember(backend, memory, x, segments.shape);
    return out;
}
} // namespace headlight::variants
