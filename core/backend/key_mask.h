#pragma once
// The one masking rule of attention (docs/engine.md): key j is masked for query i when the
// attention mask says padding, when the model is causal and j > i, or when a sliding window W is
// set and i − j ≥ W. Every C++ kernel asks a KeyMask; the Vulkan shaders (attention.comp) state
// the same rule in GLSL. Queries and keys are absolute token positions, so a Transformer-XL
// segment asks about its memory rows the same way.

#include <algorithm>
#include <cstdint>
#include <span>

namespace headlight {

struct KeyMask {
    bool causal = false;
    int slidingWindow = 0;             // 0: no window
    std::span<const uint8_t> keyValid; // [T]; empty: every key is valid

    bool valid(int64_t key) const { return keyValid.empty() || keyValid[std::size_t(key)] != 0; }
    // Causality and the window leave query i the contiguous keys [firstKey, lastKey] of `keys`.
    int64_t firstKey(int64_t query) const {
        return slidingWindow > 0 ? std::max<int64_t>(0, query - slidingWindow + 1) : 0;
    }
    int64_t lastKey(int64_t query, int64_t keys) const {
        return causal ? std::min(query, keys - 1) : keys - 1;
    }
    bool allows(int64_t query, int64_t key) const {
        return valid(key) && !(causal && key > query) &&
               !(slidingWindow > 0 && query - key >= slidingWindow);
    }
};
} // namespace headlight
