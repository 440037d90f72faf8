#pragma once
// Transformer-XL segment recurrence (Dai et al. 2019), with the Compressive Transformer's
// compressed memory (Rae et al. 2020; compressive_memory.h). The sequence runs in segments of
// `segment` tokens; attention sub-layer n keeps its inputs from earlier segments (layer n−1's
// output, never the same layer's). Queries come from the segment, keys and values from
// [compressed | memory | segment]. With xl positions (docs/zoo-format.md) the scores are
//
//   a_ij = ((q_i + u)·k_j + (q_i + v)·r_δ) · scale,   r_δ = W_R R_δ,  δ = i − j in slots,
//
// R the sinusoid table. On a checkpoint with absolute positions the memory keeps the positions it
// was embedded with (the INF-APPROX KV-memory demo on GPT-2). Mirrors tools/zoo/transformer_xl.py.

#include "backend/backend.h"
#include "backend/key_mask.h"
#include "variants/compressive_memory.h"
#include "variants/cross_attention.h"
#include "variants/variant_spec.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace headlight::variants {

// What the segments of one pass share.
struct Segments {
    Recurrence shape;
    int64_t tokens = 0, start = 0;       // the whole sequence; the segment's first token
    bool last = false;                   // no later segment reads this one's inputs
    std::vector<SegmentMemory> memories; // by attention index
};

// The layer stack on one segment [S, D] → [S, D]; with `states`, each layer's output appended.
using SegmentStack =
    std::function<DeviceTensor(const DeviceTensor& segment, std::vector<DeviceTensor>* states)>;

struct SegmentOutcome {
    DeviceTensor out; // [T, D]
    Tensor segment;   // [T]: the segment each token ran in
};

// Runs `stack` segment by segment over x [T, D]; with `hidden`, appends each layer's states of the
// whole sequence. `segments` holds the shape and collects the memories.
SegmentOutcome runSegments(Backend& backend, Segments& segments, const DeviceTensor& x,
                           const SegmentStack& stack, std::vector<DeviceTensor>* hidden);

// Where one attention sub-layer's maps go: the [H, T, T] scores and probabilities assembled
// segment by segment (token keys only), and with `internals` the compressed-slot weights as
// compressed_attention [H, T, compressed] (oldest first, right-aligned).
struct SegmentRecord {
    bool wantScores = false, wantProbabilities = false, internals = false;
    Tensor* scores = nullptr;
    Tensor* probabilities = nullptr;
    std::map<std::string, Tensor>* hostInternals = nullptr;
};

// Attention sub-layer `index` on the current segment x [S, D] → [S, D]. Which keys a query sees
// follows `rule` on absolute positions; compressed slots are always seen.
DeviceTensor attendSegment(Backend& backend, Segments& segments, int index,
                           const CrossAttentionLayer& layer, const KeyMask& rule,
                           const DeviceTensor& x, const SegmentRecord& record);
} // namespace headlight::variants
