#pragma once
// Everything the views need from one forward pass that costs more than a copy: per-head entropy
// and adjacent-layer JSD distributions (for the violins); and the head × head JSD matrix with its
// clustered order and the attention rollout, which cost O((L·H)²·T²) and O(L·T³). A dense pass's
// are all computed only when their view is first drawn and then kept: a toggle shown in another
// view pays for none of them. A long (streamed) pass's violins come with the pass.

#include "analysis/attention_view.h"
#include "analysis/clustering.h"
#include "analysis/distribution.h"
#include "tensor/tensor.h"

#include <memory>
#include <vector>

namespace headlight::app {

struct ViolinSet {
    std::vector<float> grid;                 // [G] values the densities are evaluated at
    std::vector<analysis::Violin> violins;   // layer-major, one per head
    std::vector<std::vector<int64_t>> order; // per layer, heads by ascending median
};

// The statistics only the head × head JSD and rollout views need.
struct CostlyStats {
    Tensor headJsd;                 // [L·H, L·H] mean JSD in bits between heads
    std::vector<int64_t> leafOrder; // [L·H] average-linkage display order of the heads
    Tensor rollout;                 // [T, T]
};

struct HeadViolins {
    ViolinSet entropy; // nats, one violin per (layer, head)
    ViolinSet jsd;     // bits, one per (layer pair l → l+1, head)
};

// A dense pass's leaves the inherited violins empty (violins() computes them); a streamed pass's or
// a corpus's sets them.
struct AttentionStats : HeadViolins {
    // The violins as set when `entropy` has them, else computed on first use from the pass's
    // [L, H, T, T] attention and [T] mask (as analyseAttention does), then kept (copies share
    // them). Call from one thread at a time, as `costly`.
    const HeadViolins& violins(const Tensor& attention, const analysis::TokenMask& valid) const;
    bool violinsComputed() const { return !entropy.grid.empty() || violins_ != nullptr; }

    // Computed on first use from the pass's [L, H, T, T] attention and [T] mask, then kept (copies
    // share it). Call from one thread at a time: the window's, or the command line's.
    const CostlyStats& costly(const Tensor& attention, const analysis::TokenMask& valid) const;
    bool costlyComputed() const { return costly_ != nullptr; }

private:
    mutable std::shared_ptr<const HeadViolins> violins_;
    mutable std::shared_ptr<const CostlyStats> costly_;
};

// Entropy and adjacent-layer JSD violins pooled over a corpus of texts (File ▸ Open corpus…).
struct CorpusStats {
    ViolinSet entropy;
    ViolinSet jsd;
    std::size_t texts = 0;  // analysed
    std::size_t failed = 0; // refused by the tokenizer or the model
};

// Per-head values (one text's, or pooled over a corpus) -> violins on a grid from 0 to `high`,
// with each layer's heads ordered by median.
ViolinSet violinSet(const analysis::HeadValues& values, float high);

// [L, H, T, T] attention, [T] mask -> the violins, computed now (the costly part waits for its
// views). T ≥ 1.
// A map with negative weights (learned Linformer's A·F, Nyström) is read as each row's shares
// |w_ij| / Σ_j |w_ij|, here and in `costly`.
AttentionStats analyseAttention(const Tensor& attention, const analysis::TokenMask& valid);
// The violins from per-token entropy [L, H, T] (nats) and adjacent-layer JSD [L-1, H, T] (bits)
// computed elsewhere: a long pass's streamed statistics (streamed_pass.h). No costly part: its
// views read the pass's StreamedAttention.
AttentionStats violinStats(const Tensor& entropy, const Tensor& adjacentJsd,
                           const analysis::TokenMask& valid);
} // namespace headlight::app
