#include "analysis/corpus.h"

#include <algorithm>
#include <exception>
#include <stdexcept>

namespace headlight::analysis {
namespace {

// state -> the next SplitMix64 output (Steele, Lea & Flood 2014); advances the state.
uint64_t splitMix64(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// seed, statistic, head -> an independent starting state for that head's stream.
uint64_t streamSeed(uint64_t seed, uint64_t statistic, uint64_t head) {
    uint64_t state = seed ^ (statistic << 56) ^ head;
    return splitMix64(state);
}

// [N, H, T] statistic, expected N and H, [T] mask -> (); throws when they do not fit.
void checkStatistic(const char* name, const Tensor& perToken, int64_t layers, int64_t heads,
                    std::size_t tokens) {
    if (perToken.rank() != 3 || perToken.dim(0) != layers || perToken.dim(1) != heads ||
        perToken.dim(2) != int64_t(tokens))
        throw std::invalid_argument(std::string(name) + " has shape " + perToken.shapeString() +
                                    ", expected " +
                                    headlight::shapeString({layers, heads, int64_t(tokens)}));
}

// The pending exception -> its message, for the error list.
std::string currentExceptionMessage() {
    try {
        throw;
    } catch (const std::exception& error) {
        return error.what();
    } catch (...) {
        return "unknown exception";
    }
}
} // namespace

CorpusAccumulator::CorpusAccumulator(CorpusOptions options)
    : options_(options) {}

void CorpusAccumulator::checkShapes(const TextAnalysis& text) const {
    // [L, H, T], [L-1, H, T], [T] -> ()
    if (text.entropy.rank() != 3)
        throw std::invalid_argument("entropy must be [L, H, T], got " + text.entropy.shapeString());
    const int64_t layers = initialised_ ? entropy_.sample.layers : text.entropy.dim(0);
    const int64_t heads = initialised_ ? entropy_.sample.heads : text.entropy.dim(1);
    checkStatistic("entropy", text.entropy, layers, heads, text.valid.size());
    checkStatistic("jsd", text.jsd, std::max<int64_t>(layers - 1, 0), heads, text.valid.size());
}

void CorpusAccumulator::initialise(int64_t layers, int64_t heads) {
    // L, H -> empty reservoirs for [L, H] entropy and [L-1, H] JSD heads
    const auto setUp = [this, heads](Reservoirs& reservoirs, int64_t rows, uint64_t statistic) {
        reservoirs.sample =
            HeadValues{rows, heads, std::vector<std::vector<float>>(std::size_t(rows * heads))};
        reservoirs.seen.assign(std::size_t(rows * heads), 0);
        for (int64_t head = 0; head < rows * heads; ++head)
            reservoirs.rngState.push_back(streamSeed(options_.seed, statistic, uint64_t(head)));
    };
    setUp(entropy_, layers, 0);
    setUp(jsd_, std::max<int64_t>(layers - 1, 0), 1);
    initialised_ = true;
}

void CorpusAccumulator::add(const TextAnalysis& text) {
    // one text's [L, H, T], [L-1, H, T], [T] -> pooled
    checkShapes(text);
    if (!initialised_) initialise(text.entropy.dim(0), text.entropy.dim(1));
    addStatistic(entropy_, text.entropy, text.valid);
    addStatistic(jsd_, text.jsd, text.valid);
    ++texts_;
}

void CorpusAccumulator::addStatistic(Reservoirs& reservoirs, const Tensor& perToken,
                                     const TokenMask& valid) {
    // [N, H, T], [T] -> each head's valid values offered to its reservoir
    const int64_t tokens = int64_t(valid.size());
    const float* data = perToken.data();
    for (std::size_t head = 0; head < reservoirs.seen.size(); ++head)
        for (int64_t t = 0; t < tokens; ++t)
            if (valid[std::size_t(t)]) offer(reservoirs, head, data[int64_t(head) * tokens + t]);
}

void CorpusAccumulator::offer(Reservoirs& reservoirs, std::size_t head, float value) {
    // one value -> kept, replacing a random kept value, or dropped (Algorithm R)
    std::vector<float>& kept = reservoirs.sample.values[head];
    const uint64_t seen = ++reservoirs.seen[head];
    if (kept.size() < options_.maxValuesPerHead) {
        kept.push_back(value);
        return;
    }
    // Why: the seen-th value replaces slot j for j uniform in [0, seen), so after any number of
    // values each one is kept with probability cap / seen.
    const uint64_t slot = splitMix64(reservoirs.rngState[head]) % seen;
    if (slot < kept.size()) kept[std::size_t(slot)] = value;
}

uint64_t CorpusAccumulator::entropySeen(int64_t layer, int64_t head) const {
    return entropy_.seen.at(std::size_t(layer * entropy_.sample.heads + head));
}

uint64_t CorpusAccumulator::jsdSeen(int64_t layer, int64_t head) const {
    return jsd_.seen.at(std::size_t(layer * jsd_.sample.heads + head));
}

CorpusResult aggregateCorpus(const std::vector<std::string>& texts, const AnalyseText& analyseOne,
                             const CorpusProgress& progress, const std::atomic<bool>& cancel,
                             const CorpusOptions& options) {
    // texts -> pooled [L, H] entropy and [L-1, H] JSD value lists
    CorpusResult result{CorpusAccumulator(options), 0, texts.size(), false, {}};
    for (std::size_t index = 0; index < texts.size(); ++index) {
        if (cancel.load()) {
            result.cancelled = true;
            break;
        }
        try {
            result.accumulated.add(analyseOne(texts[index]));
        } catch (...) {
            result.errors.push_back({index, currentExceptionMessage()});
        }
        result.attempted = index + 1;
        if (progress) progress(result.attempted, result.total);
    }
    return result;
}
} // namespace headlight::analysis
