#pragma once
// Everything the views need from one forward pass that costs more than a copy: per-head entropy
// and adjacent-layer JSD distributions (for the violins), the head × head JSD matrix with its
// clustered order, and the attention rollout. Computed on the worker thread with the pass, from
// core/analysis, so switching views never recomputes.

#include "analysis/attention_view.h"
#include "analysis/clustering.h"
#include "analysis/distribution.h"
#include "tensor/tensor.h"

#include <vector>

namespace headlight::app {

struct ViolinSet {
    std::vector<float> grid;                 // [G] values the densities are evaluated at
    std::vector<analysis::Violin> violins;   // layer-major, one per head
    std::vector<std::vector<int64_t>> order; // per layer, heads by ascending median
};

struct AttentionStats {
    ViolinSet entropy;              // nats, one violin per (layer, head)
    ViolinSet jsd;                  // bits, one per (layer pair l → l+1, head)
    Tensor headJsd;                 // [L·H, L·H] mean JSD in bits between heads
    std::vector<int64_t> leafOrder; // [L·H] average-linkage display order of the heads
    Tensor rollout;                 // [T, T]
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

// [L, H, T, T] attention, [T] mask -> the statistics above. T ≥ 1.
AttentionStats analyseAttention(const Tensor& attention, const analysis::TokenMask& valid);
} // namespace headlight::app
