#pragma once
// What the atlas tests run and compare with: a seeded random text (padded at its end if asked),
// one head (or the heads' mean) of a captured [H, T, T] map, and the largest difference between
// two tilings of a region.
#include "analysis/attention_atlas.h"
#include "compare.h"
#include "model/transformer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

namespace headlight::test {

// `tokens` ids drawn from the vocabulary (past its first 5, the special ids) with `seed`; the
// last `paddedTail` of them masked as padding.
inline ModelInput randomAtlasInput(const ModelSpec& spec, int tokens, int paddedTail,
                                   unsigned seed) {
    std::mt19937 random(seed);
    std::uniform_int_distribution<int32_t> token(5, int32_t(spec.vocabSize) - 1);
    ModelInput input;
    for (int t = 0; t < tokens; ++t)
        input.ids.push_back(token(random));
    if (paddedTail > 0) {
        input.attentionMask.assign(std::size_t(tokens), 1);
        std::fill(input.attentionMask.end() - paddedTail, input.attentionMask.end(), 0);
    }
    return input;
}

// [T, T]: one head of [H, T, T], or the heads' mean (head = AttentionAtlas::kAllHeads).
inline Tensor denseHeadMap(const Tensor& probabilities, int head) {
    const int64_t heads = probabilities.dim(0), tokens = probabilities.dim(1);
    Tensor map({tokens, tokens});
    for (int64_t h = 0; h < heads; ++h) {
        if (head != analysis::AttentionAtlas::kAllHeads && h != head) continue;
        const float weight =
            head == analysis::AttentionAtlas::kAllHeads ? 1.0f / float(heads) : 1.0f;
        for (int64_t i = 0; i < tokens * tokens; ++i)
            map.data()[i] += weight * probabilities.data()[h * tokens * tokens + i];
    }
    return map;
}

// The largest difference between two tilings of one region (test::maxAbsDiff: +inf when their
// grids differ, either holds a NaN or an infinity, or they are empty).
inline double largestTileDifference(const analysis::AtlasTiles& a, const analysis::AtlasTiles& b) {
    if (a.rows != b.rows || a.cols != b.cols) return kNotComparable;
    return maxAbsDiff(a.values, b.values);
}
} // namespace headlight::test
