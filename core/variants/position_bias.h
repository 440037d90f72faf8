#pragma once
// Item 11, the position encodings that are not the checkpoint's own learned table or RoPE (those
// live in the model): the sinusoidal table and ALiBi's per-head linear bias.

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace headlight::variants {

// Sinusoidal encoding (Vaswani et al. 2017): PE[t, 2i] = sin(t / 10000^(2i/D)),
// PE[t, 2i+1] = cos(t / 10000^(2i/D)); [T, D].
Tensor sinusoidalTable(int64_t tokens, int64_t width);

// ALiBi slopes (Press et al. 2022): for n a power of two, m_k = 2^(−8k/n), k = 1..n. Otherwise,
// with p the largest power of two below n, the p slopes of p followed by every other slope of 2p
// (the paper's rule; the seeds give only n = 8).
std::vector<float> alibiSlopes(int heads);

// ALiBi bias [H, T, T]: −m_h·(i − j) for keys j ≤ i; the same −m_h·|i − j| for later keys, so an
// encoder sees a symmetric recency bias (a causal model masks those keys anyway).
Tensor alibiBias(int heads, int64_t tokens);

// T5's relative-position bucket of r = j − i (Raffel et al. 2020; HF `_relative_position_bucket`):
// bidirectional (encoders) gives half the buckets to r > 0; causal (decoders) keeps r ≤ 0. Offsets
// below half the (remaining) buckets get one bucket each, larger ones share logarithmic buckets up
// to `maxDistance` (the logarithm in float32, as HF computes it).
int t5Bucket(int64_t relative, bool bidirectional, int buckets, int maxDistance);

// The T5 bias [H, T, T] from a trained table [buckets, H]: bias[h, i, j] = table[bucket(j − i), h].
Tensor t5Bias(const Tensor& table, int64_t tokens, bool bidirectional, int buckets, int maxDistance);
} // namespace headlight::variants
