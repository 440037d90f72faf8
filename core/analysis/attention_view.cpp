#include "analysis/attention_view.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace headlight::analysis {

std::span<const float> AttentionView::row(int64_t layer, int64_t head, int64_t query) const {
    // [T] slice of [L, H, T, T]
    const int64_t offset = ((layer * heads + head) * tokens + query) * tokens;
    return {data + offset, static_cast<std::size_t>(tokens)};
}

AttentionView viewAttention(const Tensor& attention, const TokenMask& valid) {
    // [L, H, T, T] | [H, T, T] -> view
    const auto& shape = attention.shape();
    if (shape.size() != 3 && shape.size() != 4)
        throw std::invalid_argument("attention must be [L, H, T, T] or [H, T, T], got " +
                                    headlight::shapeString(shape));
    if (shape[shape.size() - 1] != shape[shape.size() - 2])
        throw std::invalid_argument("attention rows must be T × T, got " +
                                    headlight::shapeString(shape));
    AttentionView view;
    view.data = attention.data();
    view.singleLayer = shape.size() == 3;
    view.layers = view.singleLayer ? 1 : shape[0];
    view.heads = shape[shape.size() - 3];
    view.tokens = shape.back();
    checkMask(valid, view.tokens);
    return view;
}

void checkMask(const TokenMask& valid, int64_t tokens) {
    // [T] -> ()
    if (static_cast<int64_t>(valid.size()) != tokens)
        throw std::invalid_argument("token mask has " + std::to_string(valid.size()) +
                                    " entries for " + std::to_string(tokens) + " tokens");
}

std::vector<int64_t> validPositions(const TokenMask& valid) {
    // [T] -> [V]
    std::vector<int64_t> positions;
    for (std::size_t t = 0; t < valid.size(); ++t)
        if (valid[t]) positions.push_back(static_cast<int64_t>(t));
    return positions;
}

TokenMask allValid(int64_t tokens) {
    // T -> [T]
    return TokenMask(static_cast<std::size_t>(std::max<int64_t>(tokens, 0)), 1);
}

Tensor stackLayers(const std::vector<Tensor>& layers) {
    // L × [H, T, T] -> [L, H, T, T]
    if (layers.empty()) throw std::invalid_argument("stackLayers needs at least one layer");
    const auto& first = layers.front().shape();
    if (first.size() != 3)
        throw std::invalid_argument("each layer must be [H, T, T], got " +
                                    headlight::shapeString(first));
    std::vector<float> values;
    values.reserve(layers.size() * layers.front().size());
    for (const Tensor& layer : layers) {
        if (layer.shape() != first)
            throw std::invalid_argument("layer shapes differ: " + headlight::shapeString(first) +
                                        " and " + headlight::shapeString(layer.shape()));
        values.insert(values.end(), layer.values().begin(), layer.values().end());
    }
    return Tensor({static_cast<int64_t>(layers.size()), first[0], first[1], first[2]},
                  std::move(values));
}
} // namespace headlight::analysis
