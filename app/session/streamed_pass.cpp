#include "streamed_pass.h"

#include "analysis/streamed_attention.h"
#include "model/capture_limit.h"
#include "variants/variant_merge.h"

namespace headlight::app {
namespace {

// Why three: the Difference view draws a head and its layer's mean, the Rollout view its own;
// every further map would be one the screen no longer shows (64 MB each at 4,096 tokens).
constexpr std::size_t kKeptValues = 3;
constexpr int kRolloutLayer = -1;

std::vector<float> valuesOf(const Tensor& t) {
    return {t.values().begin(), t.values().end()};
}
} // namespace

bool streamsAttention(const ModelSpec& spec, const variants::VariantSpec& requested,
                      int64_t tokens) {
    const double mapBytes =
        double(spec.layers) * double(spec.heads) * double(tokens) * double(tokens) * 4.0;
    const std::optional<int64_t> limit = mapCaptureTokenLimit();
    const bool long_ =
        tokens > kStreamedPassTokens || mapBytes > kMapBudgetBytes || (limit && tokens > *limit);
    if (!long_ || requested.knn) return false;
    const variants::VariantSpec effective =
        spec.architecture == Architecture::Headlight
            ? variants::requestOverCheckpoint(spec.zoo, requested)
            : requested;
    return !effective.needsComposedPath();
}

StreamedAttention::StreamedAttention(std::vector<analysis::AtlasInput> layers,
                                     analysis::TokenMask valid)
    : layers_(std::move(layers))
    , valid_(std::move(valid)) {}

std::shared_ptr<const std::vector<float>> StreamedAttention::find(int layer, int head) const {
    const std::lock_guard lock(mutex_);
    for (const Kept& kept : kept_)
        if (kept.layer == layer && kept.head == head) return kept.values;
    return nullptr;
}

std::shared_ptr<const std::vector<float>> StreamedAttention::keep(int layer, int head,
                                                                  std::vector<float> values) const {
    auto shared = std::make_shared<const std::vector<float>>(std::move(values));
    const std::lock_guard lock(mutex_);
    kept_.push_front({layer, head, shared});
    if (kept_.size() > kKeptValues) kept_.pop_back();
    return shared;
}

std::shared_ptr<const std::vector<float>> StreamedAttention::map(int layer, int head) const {
    if (auto kept = find(layer, head)) return kept;
    return keep(layer, head, valuesOf(analysis::rebuiltMap(layers_.at(std::size_t(layer)), head)));
}

bool StreamedAttention::hasMap(int layer, int head) const {
    return find(layer, head) != nullptr;
}

bool StreamedAttention::fullRollout() const {
    return tokens() <= analysis::kFullRolloutTokens;
}

std::shared_ptr<const std::vector<float>> StreamedAttention::rollout(int64_t query) const {
    const int row = fullRollout() ? -1 : int(query);
    if (auto kept = find(kRolloutLayer, row)) return kept;
    if (fullRollout())
        return keep(kRolloutLayer, row, valuesOf(analysis::streamedRollout(layers_, valid_)));
    if (query < 0) return std::make_shared<const std::vector<float>>();
    return keep(kRolloutLayer, row, analysis::streamedRolloutRow(layers_, valid_, query));
}

bool StreamedAttention::hasRollout(int64_t query) const {
    if (!fullRollout() && query < 0) return true; // nothing to build: the view asks for a query
    return find(kRolloutLayer, fullRollout() ? -1 : int(query)) != nullptr;
}
} // namespace headlight::app
