// Item 17: Transformer-XL segment recurrence (Dai et al. 2019) and the Compressive Transformer's
// compressed memory (Rae et al. 2020). The sequence runs in segments; attention sub-layer n keeps
// its inputs from earlier segments (layer n−1's output, catalogue §5 errata: never the same
// layer's), at most `memory` rows; rows leaving it are mean-pooled `rate` at a time into at most
// `compressed` slots. Queries come from the segment, keys and values from
// [compressed | memory | segment]. With xl positions (catalogue P8) the scores are
//
//   a_ij = ((q_i + u)·k_j + (q_i + v)·r_δ) · scale,   r_δ = W_R R_δ,  δ = i − j in slots,
//
// R the sinusoid table. On a checkpoint with absolute positions the memory keeps the positions it
// was embedded with (the INF-APPROX KV-memory demo on GPT-2). Mirrors tools/zoo/transformer_xl.py.
#include "backend/key_mask.h"
#include "model/transformer.h"
#include "variants/position_bias.h"

#include <algorithm>
#include <initializer_list>
#include <limits>

namespace headlight {
namespace {

int64_t rowsOf(const DeviceTensor& t) {
    return t.valid() ? t.dim(0) : 0;
}
} // namespace

DeviceTensor TransformerModel::runSegments(DeviceTensor x, Pass& pass,
                                           std::vector<PendingCapture>& pending,
                                           std::vector<DeviceTensor>* hidden, Trace& trace) const {
    const int64_t tokens = x.dim(0), d = spec_.hidden;
    SegmentState state;
    state.shape = pass.variant.recurrence.value_or(variants::Recurrence{int(tokens), 0, 0, 2});
    state.tokens = tokens;
    pass.segments = &state;
    DeviceTensor out = backend_.allocate(x.shape());
    std::vector<DeviceTensor> layerStates; // hidden states of the whole sequence, per layer
    std::optional<variants::ExitTracker> noExits;
    Tensor segmentOf({tokens});
    for (int64_t start = 0; start < tokens; start += state.shape.segment) {
        const int64_t rows = std::min<int64_t>(state.shape.segment, tokens - start);
        state.start = start;
        state.last = start + rows >= tokens;
        DeviceTensor piece = backend_.allocate({rows, d});
        backend_.copyRows(x, start, rows, piece, 0);
        std::vector<DeviceTensor> pieceStates;
        DeviceTensor y = runStack(piece, pass, pending, hidden ? &pieceStates : nullptr, noExits);
        backend_.copyRows(y, 0, rows, out, start);
        for (std::size_t l = 0; l < pieceStates.size(); ++l) {
            if (layerStates.size() <= l) layerStates.push_back(backend_.allocate(x.shape()));
            backend_.copyRows(pieceStates[l], 0, rows, layerStates[l], start);
        }
        std::fill_n(segmentOf.values().begin() + start, rows, float(start / state.shape.segment));
    }
    pass.segments = nullptr;
    if (hidden) hidden->insert(hidden->end(), layerStates.begin(), layerStates.end());
    trace.internals["segment"] = segmentOf;
    return out;
}

// One attention sub-layer on one segment x [S, D] → [S, D].
DeviceTensor TransformerModel::attendRecurrent(const Layer& layer, int index, const DeviceTensor& x,
                                               Pass& pass, PendingCapture& capture) const {
    SegmentState& state = *pass.segments;
    if (state.memories.size() <= std::size_t(index)) state.memories.resize(std::size_t(index) + 1);
    SegmentMemory& memory = state.memories[std::size_t(index)];
    const DeviceTensor extended = stackRows({memory.compressed, memory.recent, x});
    const int64_t rows = x.dim(0), keys = extended.dim(0), front = rowsOf(memory.compressed);
    const int64_t heads = spec_.heads;
    const float scale = spec_.scaleAttnWeights ? 1.0f / std::sqrt(float(spec_.headDim)) : 1.0f;
    const bool relative = pass.variant.position == variants::PositionKind::Xl;

    const CrossProjection p = projectCross(layer, x, extended);
    DeviceTensor content = p.q;
    if (relative) {
        content = backend_.allocate(p.q.shape());
        backend_.add(p.q, layer.relativeU, content);
    }
    DeviceTensor scores = headScores(content, p.kh, scale);
    DeviceTensor flatScores = scores.reshaped({heads * rows, keys});
    if (relative)
        backend_.binary(flatScores,
                        relativeScores(layer, p.q, keys, scale).reshaped({heads * rows, keys}),
                        BinaryOp::Add, flatScores);
    const DeviceTensor mask = backend_.upload(segmentMask(state, pass.input, rows, front, keys));
    DeviceTensor probabilities = backend_.allocate({heads, rows, keys});
    DeviceTensor flatProbabilities = probabilities.reshaped({heads * rows, keys});
    backend_.softmax(flatScores, &mask, flatProbabilities);
    const DeviceTensor out = attendValues(layer, probabilities, p.vh);
    recordSegment(state, front, scores, probabilities, pass.wants.internals, capture);
    if (!state.last) remember(memory, x, state.shape);
    return out;
}

// The rows of `parts` one after another (invalid parts are empty); the last part is valid.
DeviceTensor TransformerModel::stackRows(std::initializer_list<DeviceTensor> parts) const {
    int64_t rows = 0;
    for (const DeviceTensor& part : parts)
        rows += rowsOf(part);
    DeviceTensor stacked = backend_.allocate({rows, std::data(parts)[parts.size() - 1].dim(1)});
    int64_t at = 0;
    for (const DeviceTensor& part : parts) {
        if (!part.valid()) continue;
        backend_.copyRows(part, 0, part.dim(0), stacked, at);
        at += part.dim(0);
    }
    return stacked;
}

// (q_i + v)·r_δ · scale [H, S, K] by Transformer-XL's shift: the table holds a zero row, then
// distances K−1 … 0, so that each head's [S, K+1] block, read as [K+1, S] less its first row and
// read back as [S, K], has distance K − S + i − j at (i, j). Entries with δ < 0 (the future,
// masked later) read other cells.
DeviceTensor TransformerModel::relativeScores(const Layer& layer, const DeviceTensor& q,
                                              int64_t keys, float scale) const {
    const int64_t rows = q.dim(0), heads = spec_.heads, d = spec_.headDim, width = spec_.hidden;
    DeviceTensor position = backend_.allocate(q.shape());
    backend_.add(q, layer.relativeV, position);
    DeviceTensor ph = backend_.allocate({heads, rows, d});
    backend_.splitHeads(position, int(heads), ph);
    const Tensor sinusoid = variants::sinusoidalTable(keys, width);
    Tensor table({keys + 1, width});
    for (int64_t r = 1; r <= keys; ++r)
        std::copy_n(sinusoid.values().begin() + (keys - r) * width, width,
                    table.values().begin() + r * width);
    DeviceTensor r = backend_.allocate({keys + 1, heads * d});
    project(layer.relative, backend_.upload(table), r);
    DeviceTensor rh = backend_.allocate({heads, keys + 1, d});
    backend_.splitHeads(r, int(heads), rh);
    DeviceTensor padded = backend_.allocate({heads, rows, keys + 1});
    backend_.matmul(ph, rh, true, scale, padded);
    const DeviceTensor blocks = padded.reshaped({heads * (keys + 1), rows});
    DeviceTensor shifted = backend_.allocate({heads * keys, rows});
    for (int64_t h = 0; h < heads; ++h)
        backend_.copyRows(blocks, h * (keys + 1) + 1, keys, shifted, h * keys);
    return shifted.reshaped({heads, rows, keys});
}

// Query i of the segment sees every compressed slot, and a memory or segment row when the
// masking rule allows its position for the query's.
Tensor TransformerModel::segmentMask(const SegmentState& state, const ModelInput& input,
                                     int64_t rows, int64_t front, int64_t keys) const {
    Tensor mask({rows, keys});
    const KeyMask rule{spec_.causal, spec_.slidingWindow.value_or(0), input.attentionMask};
    const int64_t first =
        state.start + rows - (keys - front); // the position of the oldest memory row
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < keys; ++j) {
            const bool allowed = j < front || rule.allows(state.start + i, first + (j - front));
            mask.values()[std::size_t(i * keys + j)] = float(allowed);
        }
    return mask;
}

// The segment's rows of the [H, T, T] maps (token keys only), and its compressed-slot weights in
// the layer's `compressed_attention` [H, T, compressed] (oldest first, right-aligned).
void TransformerModel::recordSegment(const SegmentState& state, int64_t front,
                                     const DeviceTensor& scores, const DeviceTensor& probabilities,
                                     bool internals, PendingCapture& capture) const {
    const bool slots = internals && state.shape.compressed > 0;
    if (!capture.wantScores && !capture.wantProbabilities && !slots) return;
    const int64_t heads = scores.dim(0), rows = scores.dim(1), keys = scores.dim(2),
                  tokens = state.tokens;
    const int64_t first = state.start + rows - (keys - front), capacity = state.shape.compressed;
    const Tensor p = backend_.download(probabilities);
    const Tensor s = capture.wantScores ? backend_.download(scores) : Tensor();
    if (capture.wantProbabilities && capture.hostProbabilities.empty())
        capture.hostProbabilities = Tensor({heads, tokens, tokens});
    if (capture.wantScores && capture.hostScores.empty())
        capture.hostScores = Tensor({heads, tokens, tokens}, std::numeric_limits<float>::lowest());
    Tensor& compressed = capture.hostInternals["compressed_attention"];
    if (slots && compressed.empty()) compressed = Tensor({heads, tokens, capacity});
    if (!slots) capture.hostInternals.erase("compressed_attention");
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < rows; ++i) {
            const int64_t query = state.start + i;
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
                if (capture.wantProbabilities)
                    capture.hostProbabilities.values()[to] = p.values()[from];
                if (capture.wantScores && j <= keys - rows + i)
                    capture.hostScores.values()[to] = s.values()[from];
            }
        }
}

// Appends the segment's inputs; rows beyond `memory` leave, pooled `rate` at a time into the
// compressed memory, whose oldest slots leave beyond `compressed`.
void TransformerModel::remember(SegmentMemory& memory, const DeviceTensor& x,
                                const variants::Recurrence& shape) const {
    const int64_t width = x.dim(1), total = rowsOf(memory.recent) + x.dim(0);
    const int64_t leaving = std::max<int64_t>(0, total - shape.memory);
    const DeviceTensor all = stackRows({memory.recent, x});
    if (shape.memory > 0) {
        memory.recent = backend_.allocate({total - leaving, width});
        backend_.copyRows(all, leaving, total - leaving, memory.recent, 0);
    }
    if (shape.compressed == 0 || leaving == 0) return;
    const int64_t slots = leaving / shape.rate;
    Tensor pool({slots, leaving});
    for (int64_t s = 0; s < slots; ++s)
        for (int64_t r = 0; r < shape.rate; ++r)
            pool.values()[std::size_t(s * leaving + s * shape.rate + r)] = 1.0f / float(shape.rate);
    DeviceTensor old = backend_.allocate({leaving, width}),
                 pooled = backend_.allocate({slots, width});
    backend_.copyRows(all, 0, leaving, old, 0);
    backend_.matmul(backend_.upload(pool), old, false, 1.0f, pooled);
    const DeviceTensor joined = stackRows({memory.compressed, pooled});
    const int64_t kept = std::min<int64_t>(joined.dim(0), shape.compressed);
    memory.compressed = backend_.allocate({kept, width});
    backend_.copyRows(joined, joined.dim(0) - kept, kept, memory.compressed, 0);
}
} // namespace headlight
