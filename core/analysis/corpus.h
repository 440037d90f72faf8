#pragma once
// Corpus-level statistics: per-head distributions of entropy and adjacent-layer JSD pooled over
// many texts, accumulated one text at a time so a corpus never has to fit in memory at once.
//
// Memory bound: each head keeps at most `maxValuesPerHead` values per statistic. Below the cap a
// head keeps every value in arrival order; above it the list is a uniform random sample of all
// values seen, kept by reservoir sampling (Vitter's Algorithm R). The random stream of each
// (statistic, head) is SplitMix64 seeded from `seed` and the head's index, and an index is drawn
// as next() mod (values seen), whose bias (below seen / 2^64) is negligible: the same texts in
// the same order with the same seed give the same sample on every platform.

#include "analysis/distribution.h"
#include "tensor/tensor.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace headlight::analysis {

// One text's per-token results.
struct TextAnalysis {
    Tensor entropy;  // [L, H, T] nats
    Tensor jsd;      // [L-1, H, T] bits
    TokenMask valid; // [T]
};

struct CorpusOptions {
    std::size_t maxValuesPerHead = 100000; // cap per head and statistic
    uint64_t seed = 0x5eed5eedULL;         // reservoir sampling seed
};

class CorpusAccumulator {
public:
    explicit CorpusAccumulator(CorpusOptions options = {});

    // [L, H, T], [L-1, H, T], [T] -> pooled. The first text fixes L and H; a later text with other
    // sizes, or with inconsistent shapes, throws std::invalid_argument and adds nothing.
    void add(const TextAnalysis& text);

    const HeadValues& entropy() const { return entropy_.sample; }
    const HeadValues& jsd() const { return jsd_.sample; }
    // Values seen so far for one head, before capping.
    uint64_t entropySeen(int64_t layer, int64_t head) const;
    uint64_t jsdSeen(int64_t layer, int64_t head) const;
    std::size_t textCount() const { return texts_; }
    const CorpusOptions& options() const { return options_; }

private:
    // One statistic's capped per-head samples, with each head's count and random state.
    struct Reservoirs {
        HeadValues sample;
        std::vector<uint64_t> seen;
        std::vector<uint64_t> rngState;
    };

    void checkShapes(const TextAnalysis& text) const;
    void initialise(int64_t layers, int64_t heads);
    void addStatistic(Reservoirs& reservoirs, const Tensor& perToken, const TokenMask& valid);
    void offer(Reservoirs& reservoirs, std::size_t head, float value);

    CorpusOptions options_;
    Reservoirs entropy_;
    Reservoirs jsd_;
    std::size_t texts_ = 0;
    bool initialised_ = false;
};

// A text whose analysis threw, by its index in the corpus.
struct CorpusError {
    std::size_t index = 0;
    std::string message;
};

struct CorpusResult {
    CorpusAccumulator accumulated;
    std::size_t attempted = 0; // texts analysed or failed before stopping
    std::size_t total = 0;
    bool cancelled = false; // stopped by the cancel flag before every text was attempted
    std::vector<CorpusError> errors;
};

using AnalyseText = std::function<TextAnalysis(const std::string& text)>;
using CorpusProgress = std::function<void(std::size_t done, std::size_t total)>; // may be empty

// Texts -> pooled per-head values. For each text in order: stop (cancelled) if `cancel` is set,
// else run `analyseOne` and add its result; an exception from it (or a result whose shapes do not
// fit) is recorded as a CorpusError and the next text goes on. `progress` is called after each
// text, failed ones included, with the number attempted so far. Cancellation is checked between
// texts, so it takes effect once the text in flight finishes.
CorpusResult aggregateCorpus(const std::vector<std::string>& texts, const AnalyseText& analyseOne,
                             const CorpusProgress& progress, const std::atomic<bool>& cancel,
                             const CorpusOptions& options = {});
} // namespace headlight::analysis
