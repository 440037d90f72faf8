#pragma once
// Corpus-level statistics: per-head distributions of entropy and adjacent-layer JSD pooled over
// many texts, accumulated one text at a time so a corpus never has to fit in memory at once.
//
// Memory bound: each head keeps at most `maxValuesPerHead` values per statistic, a uniform random
// sample of all its values drawn as a bottom-k sample: every value gets a key, a SplitMix64 hash of
// the seed, the statistic, the head, the text's index in the corpus and the token's position, and
// a head keeps the values with the k smallest keys. Why not a reservoir (Algorithm R): its sample
// depends on the order the values arrive in, so two halves of a corpus run apart could not be
// merged into the sample one run gives. Keys fix the sample from the values' identities alone, so
// any split of a corpus into shards, merged in any order (`merge`), keeps exactly the values one
// run over the whole corpus keeps. The kept values are listed in corpus order (text index, then
// token), so below the cap a head lists every value in arrival order.
#include "analysis/distribution.h"
#include "tensor/tensor.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
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
    uint64_t seed = 0x5eed5eedULL;         // sampling key seed
    bool operator==(const CorpusOptions&) const = default;
};

// One kept value of a head: its sampling key, its place in the corpus (text index << 32 | token)
// and the value.
struct KeyedValue {
    uint64_t key = 0;
    uint64_t position = 0;
    float value = 0.0f;
    bool operator==(const KeyedValue&) const = default;
};

// One statistic's bottom-k samples, one per head (layer-major), with each head's count of values
// seen before capping.
struct KeyedSample {
    int64_t layers = 0;
    int64_t heads = 0;
    std::vector<uint64_t> seen;
    std::vector<std::vector<KeyedValue>> kept; // in no particular order
};

class CorpusAccumulator {
public:
    CorpusAccumulator() = default;
    explicit CorpusAccumulator(CorpusOptions options);
    // A state written out before (a corpus shard): the options, both statistics' samples and the
    // number of texts. Throws std::invalid_argument when the samples do not fit each other or the
    // cap.
    CorpusAccumulator(CorpusOptions options, KeyedSample entropy, KeyedSample jsd,
                      std::size_t texts);

    // [L, H, T], [L-1, H, T], [T] -> pooled, the text being number `textIndex` of the corpus
    // (its values' keys depend on it). The first text fixes L and H; a later text with other
    // sizes, or with inconsistent shapes, throws std::invalid_argument and adds nothing.
    void add(const TextAnalysis& text, uint64_t textIndex);
    // As above, the text's index being the number of texts added before it.
    void add(const TextAnalysis& text) { add(text, texts_); }
    // Pools another accumulator's values (texts of the same corpus with other indices): the
    // result keeps what one accumulator fed both sets of texts keeps, whatever the order of
    // merging. Throws std::invalid_argument when the options or the head counts differ.
    void merge(const CorpusAccumulator& other);

    // The kept values of each head, in corpus order (computed on first use after a change).
    const HeadValues& entropy() const;
    const HeadValues& jsd() const;
    const KeyedSample& entropySample() const { return entropy_; }
    const KeyedSample& jsdSample() const { return jsd_; }
    // Values seen so far for one head, before capping.
    uint64_t entropySeen(int64_t layer, int64_t head) const;
    uint64_t jsdSeen(int64_t layer, int64_t head) const;
    std::size_t textCount() const { return texts_; }
    const CorpusOptions& options() const { return options_; }

private:
    void checkShapes(const TextAnalysis& text) const;
    void initialise(int64_t layers, int64_t heads);
    void addStatistic(KeyedSample& sample, uint64_t statistic, const Tensor& perToken,
                      const TokenMask& valid, uint64_t textIndex);
    void offer(std::vector<KeyedValue>& kept, const KeyedValue& value) const;
    const HeadValues& listed(const KeyedSample& sample, std::optional<HeadValues>& cache) const;

    CorpusOptions options_;
    KeyedSample entropy_;
    KeyedSample jsd_;
    std::size_t texts_ = 0;
    bool initialised_ = false;
    // Why mutable: the corpus-order lists are sorted copies, made when first read after a change.
    mutable std::optional<HeadValues> entropyList_;
    mutable std::optional<HeadValues> jsdList_;
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
// texts, so it takes effect once the text in flight finishes. `texts` are the corpus's texts from
// number `firstIndex` on (a shard's); errors carry corpus indices.
CorpusResult aggregateCorpus(const std::vector<std::string>& texts, const AnalyseText& analyseOne,
                             const CorpusProgress& progress, const std::atomic<bool>& cancel,
                             const CorpusOptions& options = {}, std::size_t firstIndex = 0);
} // namespace headlight::analysis
