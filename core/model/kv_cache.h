#pragma once
// KvCache: the last few passes of a model, kept so that the next request recomputes only what
// changed (issue 19 §3). A pass is kept with, per layer, the residual stream entering the layer
// and, where every position depends only on itself and earlier ones (a causal model on the plain
// stack with the model's own attention: GQA, windows and soft-capping included), its keys and
// values after RoPE. A new request then reuses one of them:
//
//   Same    the same request: the kept trace as it is;
//   Layers  the same tokens, the intervention first differing at layer l (a knockout toggled
//           there): layers < l are kept, the pass starts at layer l from its kept input;
//   Prefix  the same request on a text sharing its first p tokens (a causal model): positions
//           p..T−1 attend the kept keys and values, and the prefix rows of every captured tensor
//           are kept (in a causal model they cannot change).
//
// TransformerModel::forwardCached decides what a plan allows and assembles a Trace equal to a
// full pass's; what it refuses to reuse it says in lastDecision() and the headlight.kvcache
// debug log.

#include "backend/backend.h"
#include "model/trace.h"
#include "variants/intervention.h"
#include "variants/variant_spec.h"

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace headlight {

// Rows [T, C] of a captured tensor (a pass's logits, a hidden state) as blocks shared with the
// passes they were kept for: a pass appended to a kept one shares the kept rows instead of
// copying them (a 1,000-token pass's logits are 16 MB, and copying them for the cache cost a
// token appended to it a third of its time).
class SharedRows {
public:
    SharedRows() = default;
    explicit SharedRows(Tensor rows); // one block; none when `rows` is empty

    int64_t rows() const;
    bool empty() const { return blocks_.empty(); }
    // The first `rows` rows, shared.
    SharedRows leading(int64_t rows) const;
    // These rows, then `tail`'s; empty when `tail` is (nothing captured for the new rows).
    SharedRows followedBy(const SharedRows& tail) const;
    // The rows as one tensor [T, C] (a copy).
    Tensor joined() const;

private:
    struct Block {
        std::shared_ptr<const Tensor> tensor; // [R, C]
        int64_t rows = 0;                     // its first `rows` rows
    };
    std::vector<Block> blocks_;
};

// A trace's per-position rows, kept as shared blocks.
struct KeptRows {
    std::vector<SharedRows> hiddenStates;
    SharedRows lastHiddenState, logits;
};

// One pass as the cache keeps it; never changed once kept.
struct CachedPass {
    // What the pass was asked (the key).
    std::vector<int32_t> ids, tokenTypes;
    std::vector<uint8_t> attentionMask;
    variants::VariantSpec variant; // as requested
    variants::Intervention intervention;
    CaptureRequest capture;
    // Per layer, the residual stream entering it (before the plan's patches) as row blocks
    // [rows, D] in order: an appended pass adds its new rows as one more block.
    std::vector<std::vector<DeviceTensor>> layerInputs;
    // Per layer, keys and values [kvHeads, T, headDim] after RoPE; empty unless the plan lets
    // position i depend on positions ≤ i only.
    std::vector<DeviceTensor> keys, values;
    Trace trace;   // without the rows in `rows`
    KeptRows rows; // the trace's hidden states, last hidden state and logits

    // The pass's trace, its rows joined.
    Trace fullTrace() const;

    int64_t tokens() const { return int64_t(ids.size()); }
    bool causalPrefix() const { return !keys.empty(); }
};

struct CacheReuse {
    enum class Kind { None, Same, Layers, Prefix };
    Kind kind = Kind::None;
    std::shared_ptr<const CachedPass> from;
    int layer = 0;      // Layers: the first layer recomputed
    int64_t prefix = 0; // Prefix: the positions kept
};

// What a request would be kept under, and what its plan lets it reuse.
struct CacheRequest {
    const std::vector<int32_t>& ids;
    const std::vector<int32_t>& tokenTypes;
    const std::vector<uint8_t>& attentionMask;
    const variants::VariantSpec& variant;
    const variants::Intervention& intervention;
    const CaptureRequest& capture;
    int layers = 0;
    bool prefixAllowed = false; // positions depend on earlier ones only
};

class KvCache {
public:
    static constexpr std::size_t kPasses = 3; // e.g. a knocked-out pass, its clean twin, vanilla

    // The cheapest reuse a kept pass offers the request (Kind::None when none does).
    CacheReuse find(const CacheRequest& request) const;
    void keep(std::shared_ptr<const CachedPass> pass);
    void clear();
    std::size_t size() const;

    // What the last request reused, or why it reused nothing (for tests and the debug log).
    void note(std::string decision);
    std::string lastDecision() const;

private:
    mutable std::mutex mutex_;
    std::deque<std::shared_ptr<const CachedPass>> passes_; // newest first
    std::string decision_;
};

bool sameCapture(const CaptureRequest& a, const CaptureRequest& b);
// The first layer whose head ablations or residual patches differ between a and b (replacement
// tensors compared by value); `layers` when they are the same.
int firstDifferingLayer(const variants::Intervention& a, const variants::Intervention& b,
                        int layers);
// Moves the trace's hidden states, last hidden state and logits into shared rows.
KeptRows takeRows(Trace& trace);
// Puts `rows` back into the trace (joined copies).
void putRows(const KeptRows& rows, Trace& trace);
// The residual stream entering a layer as one tensor [T, D] (its blocks copied together).
DeviceTensor joinedRows(Backend& backend, const std::vector<DeviceTensor>& blocks);
// The first `rows` rows of `blocks`, as blocks; a block cut in two is copied.
std::vector<DeviceTensor> leadingRows(Backend& backend, const std::vector<DeviceTensor>& blocks,
                                      int64_t rows);
} // namespace headlight
