#pragma once
// The statistics the views draw from a pass's attention (divergence.h, sparsity.h, rollout.h),
// computed from each layer's queries and keys (attention_atlas.h's AtlasInput) a block of query
// rows at a time, so that no L × H × T × T maps are ever held: every row is rebuilt exactly, as
// the atlas rebuilds it (AttentionAtlas::exactRows), and read by the same per-row functions as
// the dense path, so the results are the dense functions' on the same maps. Memory: per thread
// one block of rows of every head of two adjacent layers, O(H · block · T).
//
// `layers` holds one AtlasInput per layer in order, all over the same T tokens; `valid` is the
// [T] token mask (padding excluded from every statistic, as the dense functions exclude it).

#include "analysis/attention_atlas.h"
#include "analysis/attention_view.h"
#include "analysis/sparsity.h"
#include "tensor/tensor.h"

#include <optional>
#include <vector>

namespace headlight::analysis {

struct StreamedStatistics {
    Tensor entropy;         // [L, H, T] in nats: attentionEntropy
    Tensor adjacentJsd;     // [L-1, H, T] in bits: adjacentLayerJsd
    SparsityStats sparsity; // three [L, H]: attentionSparsity; empty when not asked for
};

// One layer's [T, T] map of `head`, or the heads' mean (AttentionAtlas::kAllHeads), rebuilt
// exactly from its queries and keys: the map on screen, built when it is asked for.
Tensor rebuiltMap(const AtlasInput& layer, int head);

// Entropy, adjacent-layer JSD and (unless `sparsity` is empty) sparsity in one pass over the
// rows of every layer. Why sparsity may be left out: it sorts every row, which costs more than
// the rest (the window's violins need only entropy and JSD).
StreamedStatistics
streamedStatistics(const std::vector<AtlasInput>& layers, const TokenMask& valid,
                   const std::optional<SparsityOptions>& sparsity = SparsityOptions{});

// Row `query` of attentionRollout ([T]): r ← e_query, then r ← r · Â_l from the top layer down,
// each Â_l read a block of rows at a time. Zero for a padded query.
std::vector<float> streamedRolloutRow(const std::vector<AtlasInput>& layers, const TokenMask& valid,
                                      int64_t query);

// The whole [T, T] rollout, one layer's Â_l ([T, T] in doubles) at a time; refused past
// kFullRolloutTokens, where the views ask for the selected query's row instead.
constexpr int64_t kFullRolloutTokens = 1024;
Tensor streamedRollout(const std::vector<AtlasInput>& layers, const TokenMask& valid);
} // namespace headlight::analysis
