#include "model/kv_cache.h"

#include <QLoggingCategory>
#include <algorithm>

// Why QtInfoMsg: the decisions are debug lines, off unless QT_LOGGING_RULES turns them on.
Q_LOGGING_CATEGORY(lcKvCache, "headlight.kvcache", QtInfoMsg)

namespace headlight {
namespace {

// Why a bound: an appended pass adds one block per layer, and a long run of appends would
// otherwise leave joinedRows a copy per token.
constexpr std::size_t kMaxBlocks = 32;

bool sameTensor(const Tensor& a, const Tensor& b) {
    return a.shape() == b.shape() &&
           std::equal(a.values().begin(), a.values().end(), b.values().begin());
}

bool sameHead(const variants::HeadAblation& a, const variants::HeadAblation& b) {
    return a.spec == b.spec && sameTensor(a.replacement, b.replacement);
}

bool samePatch(const variants::ResidualPatch& a, const variants::ResidualPatch& b) {
    return a.layer == b.layer && a.position == b.position && sameTensor(a.row, b.row);
}

int layerOf(const variants::HeadAblation& head) {
    return head.spec.layer;
}
int layerOf(const variants::ResidualPatch& patch) {
    return patch.layer;
}

// The entries of `items` acting on `layer`, in order.
template <typename Item>
std::vector<const Item*> atLayer(const std::vector<Item>& items, int layer) {
    std::vector<const Item*> found;
    for (const Item& item : items)
        if (layerOf(item) == layer) found.push_back(&item);
    return found;
}

template <typename Item, typename Same>
bool sameAtLayer(const std::vector<Item>& a, const std::vector<Item>& b, int layer, Same same) {
    const std::vector<const Item*> x = atLayer(a, layer), y = atLayer(b, layer);
    return std::equal(x.begin(), x.end(), y.begin(), y.end(),
                      [&](const Item* i, const Item* j) { return same(*i, *j); });
}

int64_t commonPrefix(const CacheRequest& request, const CachedPass& pass) {
    const std::size_t shorter = std::min(request.ids.size(), pass.ids.size());
    const auto typeOf = [](const std::vector<int32_t>& types, std::size_t i) {
        return i < types.size() ? types[i] : 0;
    };
    std::size_t p = 0;
    while (p < shorter && request.ids[p] == pass.ids[p] &&
           typeOf(request.tokenTypes, p) == typeOf(pass.tokenTypes, p))
        ++p;
    return int64_t(p);
}

bool sameInput(const CacheRequest& request, const CachedPass& pass) {
    return request.ids == pass.ids && request.tokenTypes == pass.tokenTypes &&
           request.attentionMask == pass.attentionMask;
}
} // namespace

bool sameCapture(const CaptureRequest& a, const CaptureRequest& b) {
    return a.probabilities == b.probabilities && a.scores == b.scores &&
           a.hiddenStates == b.hiddenStates && a.internals == b.internals && a.logits == b.logits &&
           a.headOutputs == b.headOutputs && a.queriesKeys == b.queriesKeys &&
           a.layers == b.layers && a.heads == b.heads &&
           a.residualBeforeFinalNorm == b.residualBeforeFinalNorm;
}

namespace {
// Why every edit counts as a difference: a ResidualEdit is a function, which cannot be compared,
// so two passes agree only below the first layer either edits (an edit before the final norm
// still reruns the last layer, the latest a reuse can start at).
int firstEditedLayer(const variants::Intervention& intervention, int layers) {
    int first = layers;
    for (const variants::ResidualEdit& edit : intervention.edits)
        first = std::min({first, edit.layer, layers - 1});
    return first;
}
} // namespace

int firstDifferingLayer(const variants::Intervention& a, const variants::Intervention& b,
                        int layers) {
    layers = std::min(firstEditedLayer(a, layers), firstEditedLayer(b, layers));
    for (int l = 0; l < layers; ++l)
        if (!sameAtLayer(a.heads, b.heads, l, sameHead) ||
            !sameAtLayer(a.residuals, b.residuals, l, samePatch))
            return l;
    return layers;
}

CacheReuse KvCache::find(const CacheRequest& request) const {
    const std::lock_guard lock(mutex_);
    CacheReuse best;
    for (const std::shared_ptr<const CachedPass>& pass : passes_) {
        if (!(pass->variant == request.variant) || !sameCapture(pass->capture, request.capture))
            continue;
        const int layer =
            firstDifferingLayer(request.intervention, pass->intervention, request.layers);
        if (sameInput(request, *pass)) {
            if (layer == request.layers)
                return {CacheReuse::Kind::Same, pass, layer, pass->tokens()};
            if (layer > 0 && (best.kind != CacheReuse::Kind::Layers || layer > best.layer))
                best = {CacheReuse::Kind::Layers, pass, layer, 0};
            continue;
        }
        if (!request.prefixAllowed || !pass->causalPrefix() || layer != request.layers ||
            best.kind == CacheReuse::Kind::Layers)
            continue;
        // At least the last position is computed, so a pass that only drops tokens still runs.
        const int64_t prefix =
            std::min(commonPrefix(request, *pass), int64_t(request.ids.size()) - 1);
        if (prefix > 0 && prefix > best.prefix) best = {CacheReuse::Kind::Prefix, pass, 0, prefix};
    }
    return best;
}

void KvCache::keep(std::shared_ptr<const CachedPass> pass) {
    const std::lock_guard lock(mutex_);
    passes_.push_front(std::move(pass));
    if (passes_.size() > kPasses) passes_.pop_back();
}

void KvCache::clear() {
    const std::lock_guard lock(mutex_);
    passes_.clear();
}

std::size_t KvCache::size() const {
    const std::lock_guard lock(mutex_);
    return passes_.size();
}

void KvCache::note(std::string decision) {
    qCDebug(lcKvCache, "%s", decision.c_str());
    const std::lock_guard lock(mutex_);
    decision_ = std::move(decision);
}

std::string KvCache::lastDecision() const {
    const std::lock_guard lock(mutex_);
    return decision_;
}

SharedRows::SharedRows(Tensor rows) {
    if (rows.empty()) return;
    const int64_t count = rows.dim(0);
    blocks_.push_back({std::make_shared<const Tensor>(std::move(rows)), count});
}

int64_t SharedRows::rows() const {
    int64_t count = 0;
    for (const Block& block : blocks_)
        count += block.rows;
    return count;
}

SharedRows SharedRows::leading(int64_t rows) const {
    SharedRows kept;
    for (const Block& block : blocks_) {
        if (rows <= 0) break;
        kept.blocks_.push_back({block.tensor, std::min(rows, block.rows)});
        rows -= block.rows;
    }
    return kept;
}

SharedRows SharedRows::followedBy(const SharedRows& tail) const {
    if (tail.empty()) return {};
    SharedRows all = *this;
    all.blocks_.insert(all.blocks_.end(), tail.blocks_.begin(), tail.blocks_.end());
    if (all.blocks_.size() >= kMaxBlocks) return SharedRows(all.joined());
    return all;
}

Tensor SharedRows::joined() const {
    if (blocks_.empty()) return {};
    const Tensor& first = *blocks_.front().tensor;
    if (blocks_.size() == 1 && blocks_.front().rows == first.dim(0)) return first;
    std::vector<int64_t> shape = first.shape();
    shape[0] = rows();
    const int64_t rowFloats = first.dim(0) == 0 ? 0 : int64_t(first.size()) / first.dim(0);
    // Why appended, not written into a zero-filled tensor: filling 16 MB of logits first doubled
    // the memory traffic of a token appended to a pass.
    std::vector<float> values;
    values.reserve(std::size_t(elementCount(shape)));
    for (const Block& block : blocks_)
        values.insert(values.end(), block.tensor->data(),
                      block.tensor->data() + block.rows * rowFloats);
    return Tensor(std::move(shape), std::move(values));
}

Trace CachedPass::fullTrace() const {
    Trace full = trace;
    putRows(rows, full);
    return full;
}

KeptRows takeRows(Trace& trace) {
    KeptRows rows;
    for (Tensor& hidden : trace.hiddenStates)
        rows.hiddenStates.emplace_back(std::move(hidden));
    trace.hiddenStates.clear();
    rows.lastHiddenState = SharedRows(std::move(trace.lastHiddenState));
    rows.logits = SharedRows(std::move(trace.logits));
    trace.lastHiddenState = {};
    trace.logits = {};
    return rows;
}

void putRows(const KeptRows& rows, Trace& trace) {
    trace.hiddenStates.clear();
    for (const SharedRows& hidden : rows.hiddenStates)
        trace.hiddenStates.push_back(hidden.joined());
    trace.lastHiddenState = rows.lastHiddenState.joined();
    trace.logits = rows.logits.joined();
}

DeviceTensor joinedRows(Backend& backend, const std::vector<DeviceTensor>& blocks) {
    if (blocks.size() == 1) return blocks.front();
    int64_t rows = 0;
    for (const DeviceTensor& block : blocks)
        rows += block.dim(0);
    DeviceTensor joined = backend.allocate({rows, blocks.front().dim(1)});
    int64_t row = 0;
    for (const DeviceTensor& block : blocks) {
        backend.copyRows(block, 0, block.dim(0), joined, row);
        row += block.dim(0);
    }
    return joined;
}

std::vector<DeviceTensor> leadingRows(Backend& backend, const std::vector<DeviceTensor>& blocks,
                                      int64_t rows) {
    std::vector<DeviceTensor> kept;
    for (const DeviceTensor& block : blocks) {
        if (rows <= 0) break;
        if (block.dim(0) <= rows) {
            kept.push_back(block);
        } else {
            DeviceTensor cut = backend.allocate({rows, block.dim(1)});
            backend.copyRows(block, 0, rows, cut, 0);
            kept.push_back(cut);
        }
        rows -= block.dim(0);
    }
    if (kept.size() >= kMaxBlocks) return {joinedRows(backend, kept)};
    return kept;
}
} // namespace headlight
