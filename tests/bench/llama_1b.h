#pragma once
// A Llama-3.2-1B-shaped model (16 layers, hidden 2048, 32 query and 8 key/value heads of 64,
// SwiGLU FFN 8192, RoPE θ = 500,000, RMSNorm) with random weights held as a checkpoint stores
// them (f32 or BF16), and its forward pass's multiply-adds: what bench_llama_forward and
// bench_sae_encode run.
#include "model/transformer.h"

#include <Eigen/Core>
#include <cmath>
#include <memory>
#include <vector>

namespace headlight::bench {

constexpr int64_t kVocab = 1024; // a small embedding table: the LM head is left out

inline ModelSpec llama1B() {
    ModelSpec s;
    s.architecture = Architecture::Llama;
    s.modelType = "llama";
    s.vocabSize = kVocab;
    s.hidden = 2048;
    s.layers = 16;
    s.heads = 32;
    s.kvHeads = 8;
    s.headDim = 64;
    s.intermediate = 8192;
    s.maxPositions = 131072;
    s.normEps = 1e-5f;
    s.ropeTheta = 500000.0;
    s.norm = NormKind::RmsNorm;
    s.activation = Activation::Silu;
    s.causal = true;
    s.preNorm = true;
    s.positions = PositionsKind::Rotary;
    s.tieEmbeddings = true;
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
