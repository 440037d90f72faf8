#pragma once
// BERT-base's shapes (12 layers, hidden 768, 12 heads, FFN 3072) with random weights, for the
// benchmarks (bench_forward, bench_attention_atlas, bench_kv_cache, bench_toggle_latency) and the
// GUI test that needs a real-size pass (test_pass_cancel). Header-only: each bench is one file.

#include "model/transformer.h"

#include <random>

namespace headlight::bench {

// `maxPositions` rows of learned positions (BERT-base has 512).
inline ModelSpec bertBase(int64_t maxPositions = 512) {
    ModelSpec s;
    s.architecture = Architecture::Bert;
    s.modelType = "bert";
    s.vocabSize = 30522;
    s.hidden = 768;
    s.layers = 12;
    s.heads = 12;
    s.kvHeads = 12;
    s.headDim = 64;
    s.intermediate = 3072;
    s.maxPositions = maxPositions;
    s.typeVocabSize = 2;
    s.attentionBias = true;
    return s;
}

inline Tensor randomTensor(std::vector<int64_t> shape, std::mt19937& rng, float scale = 0.02f) {
    Tensor t(std::move(shape));
    std::normal_distribution<float> normal(0.0f, scale);
    for (float& v : t.values())
        v = normal(rng);
    return t;
}

inline HostLinear randomLinear(int64_t out, int64_t in, std::mt19937& rng) {
    return {randomTensor({out, in}, rng), randomTensor({out}, rng)};
}

inline HostNorm unitNorm(int64_t d) {
    return {Tensor({d}, 1.0f), Tensor({d}, 0.0f)};
}

inline HostWeights randomBertWeights(const ModelSpec& s) {
    std::mt19937 rng(42);
    HostWeights w;
    w.tokenEmbedding = randomTensor({s.vocabSize, s.hidden}, rng);
    w.positionEmbedding = randomTensor({s.maxPositions, s.hidden}, rng);
    w.tokenTypeEmbedding = randomTensor({s.typeVocabSize, s.hidden}, rng);
    w.embeddingNorm = unitNorm(s.hidden);
    for (int l = 0; l < s.layers; ++l) {
        HostLayer layer;
        layer.query = randomLinear(s.hidden, s.hidden, rng);
        layer.key = randomLinear(s.hidden, s.hidden, rng);
        layer.value = randomLinear(s.hidden, s.hidden, rng);
        layer.output = randomLinear(s.hidden, s.hidden, rng);
        layer.attentionNorm = unitNorm(s.hidden);
        layer.up = randomLinear(s.intermediate, s.hidden, rng);
        layer.down = randomLinear(s.hidden, s.intermediate, rng);
        layer.ffnNorm = unitNorm(s.hidden);
        w.layers.push_back(std::move(layer));
    }
    return w;
}

} // namespace headlight::bench
