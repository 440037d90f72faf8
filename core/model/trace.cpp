#include "trace.h"

#include <algorithm>
#include <stdexcept>

namespace headlight {

bool CaptureRequest::wantsLayer(int layer) const {
    return layers.empty() || std::find(layers.begin(), layers.end(), layer) != layers.end();
}

Tensor selectHeads(const Tensor& perHead, const std::vector<int>& heads) {
    if (heads.empty()) return perHead;
    const int64_t count = perHead.dim(0), block = perHead.dim(1) * perHead.dim(2);
    std::vector<float> values;
    for (int h : heads) {
        if (h < 0 || h >= count)
            throw std::out_of_range("head " + std::to_string(h) + " does not exist (the model has " +
                                    std::to_string(count) + ")");
        values.insert(values.end(), perHead.values().begin() + h * block, perHead.values().begin() + (h + 1) * block);
    }
    return Tensor({int64_t(heads.size()), perHead.dim(1), perHead.dim(2)}, std::move(values));
}

namespace {
// The rows of block b of funnel_merge [blocks, T] whose row count is `rows` (blocks of equal
// counts hold equal rows: pooling leaves only a single row unchanged).
const float* mergeRowOf(const Tensor& merge, int64_t rows) {
    const int64_t blocks = merge.dim(0), tokens = merge.dim(1);
    for (int64_t b = 0; b < blocks; ++b) {
        const float* row = merge.values().data() + b * tokens;
        if (int64_t(row[tokens - 1]) + 1 == rows) return row;
    }
    throw std::logic_error("no funnel block has " + std::to_string(rows) + " rows");
}
} // namespace

Tensor tokenResolution(const Tensor& map, const Tensor& merge) {
    const int64_t heads = map.dim(0), rows = map.dim(1), keys = map.dim(2), tokens = merge.dim(1);
    const float* queryRow = mergeRowOf(merge, rows);
    const float* keyRow = mergeRowOf(merge, keys);
    std::vector<float> covered(std::size_t(keys), 0.0f);
    for (int64_t j = 0; j < tokens; ++j)
        covered[std::size_t(keyRow[j])] += 1.0f;
    Tensor out({heads, tokens, tokens});
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < tokens; ++i)
            for (int64_t j = 0; j < tokens; ++j) {
                const auto key = std::size_t(keyRow[j]);
                const float weight =
                    map.values()[std::size_t((h * rows + int64_t(queryRow[i])) * keys) + key];
                out.values()[std::size_t((h * tokens + i) * tokens + j)] = weight / covered[key];
            }
    return out;
}

Tensor Trace::stackedProbabilities() const {
    if (layers.empty()) return Tensor({0});
    std::vector<float> values;
    std::vector<int64_t> shape;
    // Why: growing by doubling copied the maps about twice over.
    values.reserve(layers.size() * std::size_t(layers.front().probabilities.size()));
    const auto merge = internals.find("funnel_merge");
    for (std::size_t l = 0; l < layers.size(); ++l) {
        const Tensor& captured = layers[l].probabilities;
        if (captured.empty())
            throw std::logic_error("layer " + std::to_string(l) + " was not captured");
        const bool pooled = merge != internals.end() && (captured.dim(1) != int64_t(ids.size()) ||
                                                         captured.dim(2) != int64_t(ids.size()));
        const Tensor expanded = pooled ? tokenResolution(captured, merge->second) : Tensor();
        const Tensor& p = pooled ? expanded : captured;
        if (shape.empty()) shape = p.shape();
        values.insert(values.end(), p.values().begin(), p.values().end());
    }
    shape.insert(shape.begin(), int64_t(layers.size()));
    return Tensor(shape, std::move(values));
}
} // namespace headlight
