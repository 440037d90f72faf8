#pragma once
// SeededRandom: the one random source of the variants (random mask parts, LSH rotations, random
// features). It is SplitMix64 (Steele, Lea & Flood 2014) with Box–Muller normals, chosen because
// it is five lines in any language: tools/golden reimplements it in Python, so PyTorch references
// draw exactly the numbers the engine draws.
//
//   next():    state += 0x9E3779B97F4A7C15; z = state;
//              z = (z ^ (z >> 30)) · 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) · 0x94D049BB133111EB;
//              return z ^ (z >> 31)
//   uniform(): (next() >> 11) · 2⁻⁵³, in [0, 1)
//   normal():  √(−2 ln(1 − u₁)) · cos(2π u₂), one normal per two uniforms (no caching)
//   below(n):  next() mod n

#include <cmath>
#include <cstdint>

namespace headlight::variants {

class SeededRandom {
public:
    explicit SeededRandom(uint64_t seed) : state_(seed) {}

    uint64_t next() {
        state_ += 0x9E3779B97F4A7C15ull;
        uint64_t z = state_;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double uniform() { return double(next() >> 11) * 0x1.0p-53; }
    double normal() {
        const double u1 = uniform(), u2 = uniform();
        return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * M_PI * u2);
    }
    uint64_t below(uint64_t n) { return next() % n; }

private:
    uint64_t state_;
};

// A stream per purpose and layer, so that adding a layer or an option does not shift the numbers
// another one draws: seed ⊕ (purpose · 2³²) ⊕ layer, mixed by one SplitMix64 step.
inline uint64_t streamSeed(uint64_t seed, uint32_t purpose, uint32_t layer) {
    SeededRandom mix(seed ^ (uint64_t(purpose) << 32) ^ layer);
    return mix.next();
}
} // namespace headlight::variants
