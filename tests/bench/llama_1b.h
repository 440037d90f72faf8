#pragma once
// Llama-shaped models with random weights held as a checkpoint stores them (f32 or BF16), and a
// pass's multiply-adds: Llama 3.2 1B's shape (16 layers, hidden 2048, 32 query and 8 key/value
// heads of 64, SwiGLU FFN 8192, RoPE θ = 500,000, RMSNorm) for bench_llama_forward and
// bench_sae_encode, a smaller one for bench_kv_cache.
#include "model/transformer.h"

#include <Eigen/Core>
#include <cmath>
#include <memory>
#include <vector>

namespace headlight::bench {

// A Llama-family spec (RMSNorm, SwiGLU, RoPE, tied embeddings) of the given shape, heads of 64.
struct LlamaShape {
    int64_t vocab = 0;
    int64_t hidden = 0;
    int layers = 0;
    int heads = 0;
    int kvHeads = 0;
    int64_t intermediate = 0;
    int64_t maxPositions = 0;
    float normEps = 1e-5f;
};

inline ModelSpec llamaShaped(const LlamaShape& shape) {
    ModelSpec s;
    s.architecture = Architecture::Llama;
    s.modelType = "llama";
    s.vocabSize = shape.vocab;
    s.hidden = shape.hidden;
    s.layers = shape.layers;
    s.heads = shape.heads;
    s.kvHeads = shape.kvHeads;
    s.headDim = 64;
    s.intermediate = shape.intermediate;
    s.maxPositions = shape.maxPositions;
    s.normEps = shape.normEps;
    s.norm = NormKind::RmsNorm;
    s.activation = Activation::Silu;
    s.causal = true;
    s.preNorm = true;
    s.positions = PositionsKind::Rotary;
    s.tieEmbeddings = true;
    return s;
}

// Llama 3.2 1B's shape with a 1,024-entry embedding table (the 128k LM head is left out).
inline ModelSpec llama1B() {
    ModelSpec s = llamaShaped({1024, 2048, 16, 32, 8, 8192, 131072, 1e-5f});
    s.ropeTheta = 500000.0;
    return s;
}

// A [rows, cols] weight held as a checkpoint stores it, its values uniform with PyTorch's
// nn.Linear scale (±1/√cols). Why not std::normal_distribution: a billion draws of it take
// longer than the benchmark; a linear congruential generator is enough for timing.
inline io::StoredMatrix randomStored(int64_t rows, int64_t cols, io::DType dtype, uint32_t& state) {
    const std::size_t count = std::size_t(rows * cols);
    const float bound = 1.0f / std::sqrt(float(cols));
    const auto next = [&] {
        state = state * 1664525u + 1013904223u;
        return bound * (float(state >> 8) * (2.0f / 16777216.0f) - 1.0f);
    };
    std::shared_ptr<void> owner;
    const std::byte* bytes = nullptr;
    if (dtype == io::DType::BF16) {
        auto bits = std::make_shared<std::vector<uint16_t>>(count);
        for (uint16_t& b : *bits)
            b = Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(next()));
        bytes = reinterpret_cast<const std::byte*>(bits->data());
        owner = bits;
    } else {
        auto values = std::make_shared<std::vector<float>>(count);
        for (float& v : *values)
            v = next();
        bytes = reinterpret_cast<const std::byte*>(values->data());
        owner = values;
    }
    return {dtype, bytes, rows, cols, owner};
}

inline HostLinear storedLinear(int64_t out, int64_t in, io::DType dtype, uint32_t& state) {
    HostLinear linear;
    linear.stored = randomStored(out, in, dtype, state);
    return linear;
}

inline HostNorm unitRmsNorm(int64_t d) {
    return {Tensor({d}, 1.0f), {}};
}

inline HostWeights llamaWeights(const ModelSpec& s, io::DType dtype) {
    uint32_t state = 42;
    HostWeights w;
    w.tokenEmbeddingStored = randomStored(s.vocabSize, s.hidden, dtype, state);
    const int64_t q = int64_t(s.heads) * s.headDim, kv = int64_t(s.kvHeads) * s.headDim;
    for (int l = 0; l < s.layers; ++l) {
        HostLayer layer;
        layer.query = storedLinear(q, s.hidden, dtype, state);
        layer.key = storedLinear(kv, s.hidden, dtype, state);
        layer.value = storedLinear(kv, s.hidden, dtype, state);
        layer.output = storedLinear(s.hidden, q, dtype, state);
        layer.attentionNorm = unitRmsNorm(s.hidden);
        layer.gate = storedLinear(s.intermediate, s.hidden, dtype, state);
        layer.up = storedLinear(s.intermediate, s.hidden, dtype, state);
        layer.down = storedLinear(s.hidden, s.intermediate, dtype, state);
        layer.ffnNorm = unitRmsNorm(s.hidden);
        w.layers.push_back(std::move(layer));
    }
    w.finalNorm = unitRmsNorm(s.hidden);
    w.lmHead.kind = HostLmHead::Kind::Tied;
    return w;
}

inline double forwardFlops(const ModelSpec& s, int64_t t) {
    const double d = s.hidden, f = s.intermediate, q = double(s.heads) * s.headDim;
    const double kv = double(s.kvHeads) * s.headDim;
    const double projections = 2.0 * t * d * (2 * q + 2 * kv) + 2.0 * t * d * f * 3;
    const double attention = 2.0 * 2.0 * (t * (t + 1) / 2.0) * q;
    return (projections + attention) * s.layers;
}

} // namespace headlight::bench
