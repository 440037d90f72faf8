#include "analysis/head_roles.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace headlight::analysis {

DetectionPattern previousTokenPattern(int64_t tokens) {
    DetectionPattern pattern(std::size_t(tokens * tokens), 0);
    for (int64_t i = 1; i < tokens; ++i)
        pattern[std::size_t(i * tokens + i - 1)] = 1;
    return pattern;
}

DetectionPattern duplicateTokenPattern(const std::vector<int32_t>& ids) {
    const auto tokens = int64_t(ids.size());
    DetectionPattern pattern(std::size_t(tokens * tokens), 0);
    for (int64_t i = 0; i < tokens; ++i)
        for (int64_t j = 0; j < i; ++j)
            pattern[std::size_t(i * tokens + j)] = ids[std::size_t(i)] == ids[std::size_t(j)];
    return pattern;
}

DetectionPattern inductionPattern(const std::vector<int32_t>& ids) {
    const auto tokens = int64_t(ids.size());
    const DetectionPattern duplicate = duplicateTokenPattern(ids);
    DetectionPattern pattern(std::size_t(tokens * tokens), 0);
    // Key j takes the duplicate pattern's key j - 1; j <= i keeps the lower triangle.
    for (int64_t i = 0; i < tokens; ++i)
        for (int64_t j = 1; j <= i; ++j)
            pattern[std::size_t(i * tokens + j)] = duplicate[std::size_t(i * tokens + j - 1)];
    return pattern;
}

double patternScore(const float* map, const DetectionPattern& pattern, int64_t tokens) {
    double matched = 0.0, total = 0.0;
    for (int64_t k = 0; k < tokens * tokens; ++k) {
        total += double(map[k]);
        if (pattern[std::size_t(k)]) matched += double(map[k]);
    }
    if (total == 0.0) return std::numeric_limits<double>::quiet_NaN();
    return matched / total;
}

double patternScore(const float* map, const CustomPattern& pattern) {
    double matched = 0.0, total = 0.0;
    for (std::size_t k = 0; k < pattern.weights.size(); ++k) {
        total += double(map[k]);
        matched += double(map[k]) * double(pattern.weights[k]);
    }
    if (total == 0.0) return std::numeric_limits<double>::quiet_NaN();
    return matched / total;
}

void checkCustomPattern(const CustomPattern& pattern) {
    const int64_t t = pattern.tokens;
    if (t < 2 || pattern.weights.size() != std::size_t(t * t))
        throw std::invalid_argument("a pattern must be a square of at least 2 x 2 values");
    for (int64_t i = 0; i < t; ++i)
        for (int64_t j = 0; j < t; ++j) {
            const float value = pattern.weights[std::size_t(i * t + j)];
            const std::string cell = "row " + std::to_string(i) + ", column " + std::to_string(j);
            if (!std::isfinite(value))
                throw std::invalid_argument("the pattern's " + cell + " is not a finite number");
            if (j > i && value != 0.0f)
                throw std::invalid_argument("the pattern's " + cell +
                                            " lies above the diagonal (a query's later key); "
                                            "a pattern is lower triangular, as detect_head asks");
        }
}

double firstTokenShare(const float* map, int64_t tokens) {
    double share = 0.0;
    for (int64_t i = 0; i < tokens; ++i) {
        double row = 0.0;
        for (int64_t j = 0; j < tokens; ++j)
            row += double(map[i * tokens + j]);
        share += row > 0.0 ? double(map[i * tokens]) / row : 0.0;
    }
    return share / double(tokens);
}

std::vector<double> firstTokenShares(const Tensor& attentions) {
    if (attentions.rank() != 4 || attentions.dim(2) != attentions.dim(3))
        throw std::invalid_argument("sink shares need [L, H, T, T] maps, not " +
                                    attentions.shapeString());
    const int64_t tokens = attentions.dim(2);
    const int64_t heads = attentions.dim(0) * attentions.dim(1);
    std::vector<double> shares;
    for (int64_t h = 0; h < heads; ++h)
        shares.push_back(firstTokenShare(attentions.data() + h * tokens * tokens, tokens));
    return shares;
}

namespace {
// SplitMix64 (Steele, Lea and Flood 2014): a fixed sequence for a seed on every platform.
uint64_t nextRandom(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
} // namespace

std::vector<std::vector<int32_t>> repeatedRandomProbes(uint64_t seed, int count, int length,
                                                       int vocab, int excluded) {
    std::vector<int32_t> pool;
    for (int id = 0; id < vocab; ++id)
        if (id != excluded) pool.push_back(id);
    if (length < 1 || std::size_t(length) > pool.size())
        throw std::invalid_argument("the vocabulary has " + std::to_string(pool.size()) +
                                    " usable ids, fewer than the " + std::to_string(length) +
                                    " distinct tokens a probe draws");
    uint64_t state = seed;
    std::vector<std::vector<int32_t>> probes;
    for (int p = 0; p < count; ++p) {
        // A partial Fisher-Yates shuffle of the pool draws `length` distinct ids.
        std::vector<int32_t> ids;
        for (int i = 0; i < length; ++i) {
            const std::size_t remaining = pool.size() - std::size_t(i);
            const std::size_t pick = std::size_t(i) + std::size_t(nextRandom(state) % remaining);
            std::swap(pool[std::size_t(i)], pool[pick]);
            ids.push_back(pool[std::size_t(i)]);
        }
        std::vector<int32_t> probe = ids;
        probe.insert(probe.end(), ids.begin(), ids.end());
        probes.push_back(std::move(probe));
    }
    return probes;
}

HeadRoleAccumulator::HeadRoleAccumulator(int layers, int heads, CustomPattern custom)
    : layers_(layers)
    , heads_(heads)
    , custom_(std::move(custom)) {
    if (!custom_.weights.empty()) checkCustomPattern(custom_);
    const auto count = std::size_t(layers) * std::size_t(heads);
    previous_.assign(count, 0.0);
    duplicate_.assign(count, 0.0);
    induction_.assign(count, 0.0);
    sink_.assign(count, 0.0);
    customScores_.assign(count, 0.0);
    offsets_.assign(count * kMaxPositionalOffset, 0.0);
}

void HeadRoleAccumulator::add(const std::vector<int32_t>& ids, const Tensor& attentions) {
    const auto tokens = int64_t(ids.size());
    if (tokens < 2) throw std::invalid_argument("a probe needs at least 2 tokens");
    if (attentions.shape() != std::vector<int64_t>{layers_, heads_, tokens, tokens})
        throw std::invalid_argument("head roles: the attention is not [" + std::to_string(layers_) +
                                    ", " + std::to_string(heads_) + ", T, T] for " +
                                    std::to_string(tokens) + " tokens");
    const bool custom = !custom_.weights.empty();
    if (custom && tokens != custom_.tokens)
        throw std::invalid_argument("the pattern is " + std::to_string(custom_.tokens) + " x " +
                                    std::to_string(custom_.tokens) + " but the sequence has " +
                                    std::to_string(tokens) + " tokens");
    const DetectionPattern previous = previousTokenPattern(tokens);
    const DetectionPattern duplicate = duplicateTokenPattern(ids);
    const DetectionPattern induction = inductionPattern(ids);
    const int64_t offsets = std::min<int64_t>(kMaxPositionalOffset, tokens - 1);
    const float* values = attentions.values().data();
    for (std::size_t head = 0; head < previous_.size(); ++head) {
        const float* map = values + int64_t(head) * tokens * tokens;
        previous_[head] += patternScore(map, previous, tokens);
        duplicate_[head] += patternScore(map, duplicate, tokens);
        induction_[head] += patternScore(map, induction, tokens);
        if (custom) customScores_[head] += patternScore(map, custom_);
        sink_[head] += firstTokenShare(map, tokens);
        for (int64_t k = 1; k <= offsets; ++k) {
            double weight = 0.0;
            for (int64_t i = k; i < tokens; ++i)
                weight += double(map[i * tokens + i - k]);
            offsets_[head * kMaxPositionalOffset + std::size_t(k - 1)] +=
                weight / double(tokens - k);
        }
    }
    shortest_ = sequences_ == 0 ? tokens : std::min(shortest_, tokens);
    ++sequences_;
}

std::vector<HeadRoleScores> HeadRoleAccumulator::scores() const {
    if (sequences_ == 0) throw std::logic_error("head roles: no probe sequence was scored");
    const double n = double(sequences_);
    // Offsets every sequence has: below the shortest one's length.
    const int64_t offsets = std::min<int64_t>(kMaxPositionalOffset, shortest_ - 1);
    std::vector<HeadRoleScores> result(previous_.size());
    for (std::size_t head = 0; head < previous_.size(); ++head) {
        HeadRoleScores& s = result[head];
        s.previousToken = previous_[head] / n;
        s.duplicateToken = duplicate_[head] / n;
        s.induction = induction_[head] / n;
        s.sink = sink_[head] / n;
        if (!custom_.weights.empty()) s.custom = customScores_[head] / n;
        s.positionalOffset = 1;
        s.positional = offsets_[head * kMaxPositionalOffset] / n;
        for (int64_t k = 2; k <= offsets; ++k) {
            const double mean = offsets_[head * kMaxPositionalOffset + std::size_t(k - 1)] / n;
            if (mean > s.positional) {
                s.positional = mean;
                s.positionalOffset = int(k);
            }
        }
    }
    return result;
}
} // namespace headlight::analysis
