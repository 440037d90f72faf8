#pragma once
// A long pass's attention kept as each layer's post-RoPE queries and keys (CaptureRequest::
// queriesKeys) instead of its [L, H, T, T] maps: a 1B model's 16 × 32 maps at 2,048 tokens are
// 8.6 GB, of which a view draws one map at a time. The violins' statistics are computed over
// rows rebuilt block by block (analysis/streamed_attention.h); the map on screen (one head, or a
// layer's mean) and the rollout are built when a view asks for them and kept for the current
// selection, so choosing a layer or head never reruns the model.

#include "analysis/attention_atlas.h"
#include "analysis/attention_view.h"
#include "model/model_spec.h"
#include "variants/variant_spec.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace headlight::app {

// Why these two limits: past 1,024 tokens a pass's maps outgrow everything else it holds (and
// the full rollout, O(L·T³), stops being interactive); and a map set over 1 GiB (a 1B model's
// 16 × 32 heads at 1,024 tokens: 2.1 GB) outweighs a small model's weights and activations
// many times over, while the views draw one map of it. A 1B model at 512 tokens (0.5 GB) and
// every zoo model up to 1,024 tokens stay on full capture.
constexpr int64_t kStreamedPassTokens = 1024;
constexpr double kMapBudgetBytes = 1024.0 * 1024.0 * 1024.0;

// Whether a pass of `tokens` tokens keeps queries and keys instead of maps: past the limits
// above (or past HEADLIGHT_MAP_CAPTURE_TOKENS when that is set), for attention the fused kernel
// runs. A variant whose weights are not a softmax of one layer's Q·K (a sparse mask, LSH, a
// linearized kernel, kNN-LM) keeps full capture, which the memory plan and the capture limit
// refuse with their reasons when the text is too long for it.
bool streamsAttention(const ModelSpec& spec, const variants::VariantSpec& requested,
                      int64_t tokens);

class StreamedAttention {
public:
    StreamedAttention(std::vector<analysis::AtlasInput> layers, analysis::TokenMask valid);

    int layers() const { return int(layers_.size()); }
    int heads() const { return layers_.front().heads; }
    int64_t tokens() const { return layers_.front().queries.dim(0); }
    const std::vector<analysis::AtlasInput>& inputs() const { return layers_; }
    const analysis::TokenMask& valid() const { return valid_; }

    // [T, T] of `head` of `layer`, or the heads' mean (AttentionAtlas::kAllHeads): built on the
    // calling thread when it is not kept, then kept with the last few asked for.
    std::shared_ptr<const std::vector<float>> map(int layer, int head) const;
    bool hasMap(int layer, int head) const;

    // The rollout the Rollout view draws: the whole [T, T] up to analysis::kFullRolloutTokens,
    // past it the row of `query` ([T]; a query below 0 has none). Built when not kept.
    std::shared_ptr<const std::vector<float>> rollout(int64_t query) const;
    bool hasRollout(int64_t query) const;
    bool fullRollout() const;

private:
    struct Kept {
        int layer = 0, head = 0; // rollout: layer −1, head the query row (−1 for the whole)
        std::shared_ptr<const std::vector<float>> values;
    };
    std::shared_ptr<const std::vector<float>> find(int layer, int head) const;
    std::shared_ptr<const std::vector<float>> keep(int layer, int head,
                                                   std::vector<float> values) const;

    std::vector<analysis::AtlasInput> layers_;
    analysis::TokenMask valid_;
    mutable std::mutex mutex_;
    mutable std::deque<Kept> kept_; // newest first
};
} // namespace headlight::app
