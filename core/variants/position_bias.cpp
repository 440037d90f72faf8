#include "variants/position_bias.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace headlight::variants {

Tensor sinusoidalTable(int64_t tokens, int64_t width) {
    Tensor table({tokens, width});
    for (int64_t t = 0; t < tokens; ++t)
        for (int64_t i = 0; i < width; i += 2) {
            const double angle = double(t) / std::pow(10000.0, double(i) / double(width));
            table.values()[std::size_t(t * width + i)] = float(std::sin(angle));
            if (i + 1 < width) table.values()[std::size_t(t * width + i + 1)] = float(std::cos(angle));
        }
    return table;
}

namespace {
std::vector<float> powerOfTwoSlopes(int n) {
    std::vector<float> slopes;
    for (int k = 1; k <= n; ++k) slopes.push_back(float(std::pow(2.0, -8.0 * k / n)));
    return slopes;
}
} // namespace

std::vector<float> alibiSlopes(int heads) {
    int power = 1;
    while (power * 2 <= heads) power *= 2;
    std::vector<float> slopes = powerOfTwoSlopes(power);
    const std::vector<float> finer = powerOfTwoSlopes(2 * power);
    for (int k = 0; int(slopes.size()) < heads; k += 2) slopes.push_back(finer[std::size_t(k)]);
    return slopes;
}

Tensor alibiBias(int heads, int64_t tokens) {
    const std::vector<float> slopes = alibiSlopes(heads);
    Tensor bias({heads, tokens, tokens});
    float* b = bias.values().data();
    for (int h = 0; h < heads; ++h)
        for (int64_t i = 0; i < tokens; ++i)
            for (int64_t j = 0; j < tokens; ++j) *b++ = -slopes[std::size_t(h)] * float(std::llabs(i - j));
    return bias;
}
int t5Bucket(int64_t relative, bool bidirectional, int buckets, int maxDistance) {
    int bucket = 0;
    int64_t n = -relative; // HF: n = query − key
    if (bidirectional) {
        buckets /= 2;
        if (n < 0) bucket += buckets;
        n = std::llabs(n);
    } else {
        n = std::max<int64_t>(n, 0);
    }
    const int exact = buckets / 2;
    if (n < exact) return bucket + int(n);
    const float scaled = std::log(float(n) / float(exact)) / float(std::log(double(maxDistance) / exact)) *
                         float(buckets - exact);
    return bucket + std::min(exact + int(scaled), buckets - 1);
}

Tensor t5Bias(const Tensor& table, int64_t tokens, bool bidirectional, int buckets, int maxDistance) {
    const int64_t heads = table.shape()[1];
    Tensor bias({heads, tokens, tokens});
    for (int64_t i = 0; i < tokens; ++i)
        for (int64_t j = 0; j < tokens; ++j) {
            const int b = t5Bucket(j - i, bidirectional, buckets, maxDistance);
            for (int64_t h = 0; h < heads; ++h)
                bias.values()[std::size_t((h * tokens + i) * tokens + j)] = table.values()[std::size_t(b * heads + h)];
        }
    return bias;
}
} // namespace headlight::variants
