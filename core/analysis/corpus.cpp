#include "analysis/corpus.h"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <utility>

namespace headlight::analysis {
namespace {

// state -> the next SplitMix64 output (Steele, Lea & Flood 2014); advances the state.
uint64_t splitMix64(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// seed, statistic, head, text index, token -> the value's sampling key: SplitMix64 chained over
// the fields, so each key is a fixed, well-mixed function of the value's identity.
uint64_t samplingKey(uint64_t seed, uint64_t statistic, uint64_t head, uint64_t position) {
    uint64_t state = seed ^ (statistic << 56) ^ head;
    uint64_t key = splitMix64(state);
    state = key ^ position;
    return splitMix64(state);
}

bool byKey(const KeyedValue& a, const KeyedValue& b) {
    return a.key != b.key ? a.key < b.key : a.position < b.position;
}

// kept values (any order) -> the same, in corpus order
std::vector<float> inCorpusOrder(std::vector<KeyedValue> kept) {
    std::sort(kept.begin(), kept.end(),
              [](const KeyedValue& a, const KeyedValue& b) { return a.position < b.position; });
    std::vector<float> values;
    values.reserve(kept.size());
    for (const KeyedValue& v : kept)
        values.push_back(v.value);
    return values;
}

// sample, expected rows and heads, cap -> (); throws when a restored sample does not fit.
void checkRestored(const char* name, const KeyedSample& sample, int64_t rows, int64_t heads,
                   std::size_t cap) {
    const auto count = std::size_t(rows * heads);
    if (sample.layers != rows || sample.heads != heads || sample.seen.size() != count ||
        sample.kept.size() != count)
        throw std::invalid_argument(std::string(name) + " sample has the wrong number of heads");
    for (std::size_t head = 0; head < count; ++head)
        if (sample.kept[head].size() > std::min<uint64_t>(sample.seen[head], cap) ||
            (sample.kept[head].size() < cap && sample.kept[head].size() != sample.seen[head]))
            throw std::invalid_argument(std::string(name) +
                                        " sample keeps a number of values its counts deny");
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

CorpusAccumulator::CorpusAccumulator(CorpusOptions options, KeyedSample entropy, KeyedSample jsd,
                                     std::size_t texts)
    : options_(options)
    , entropy_(std::move(entropy))
    , jsd_(std::move(jsd))
    , texts_(texts)
    , initialised_(true) {
    checkRestored("entropy", entropy_, entropy_.layers, entropy_.heads, options_.maxValuesPerHead);
    checkRestored("jsd", jsd_, std::max<int64_t>(entropy_.layers - 1, 0), entropy_.heads,
                  options_.maxValuesPerHead);
    for (KeyedSample* sample : {&entropy_, &jsd_})
        for (std::vector<KeyedValue>& kept : sample->kept)
            if (kept.size() == options_.maxValuesPerHead)
                std::make_heap(kept.begin(), kept.end(), byKey);
}

void CorpusAccumulator::checkShapes(const TextAnalysis& text) const {
    // [L, H, T], [L-1, H, T], [T] -> ()
    if (text.entropy.rank() != 3)
        throw std::invalid_argument("entropy must be [L, H, T], got " + text.entropy.shapeString());
    const int64_t layers = initialised_ ? entropy_.layers : text.entropy.dim(0);
    const int64_t heads = initialised_ ? entropy_.heads : text.entropy.dim(1);
    checkStatistic("entropy", text.entropy, layers, heads, text.valid.size());
    checkStatistic("jsd", text.jsd, std::max<int64_t>(layers - 1, 0), heads, text.valid.size());
}

void CorpusAccumulator::initialise(int64_t layers, int64_t heads) {
    // L, H -> empty samples for [L, H] entropy and [L-1, H] JSD heads
    const auto setUp = [heads](KeyedSample& sample, int64_t rows) {
        sample = KeyedSample{rows, heads, std::vector<uint64_t>(std::size_t(rows * heads), 0),
                             std::vector<std::vector<KeyedValue>>(std::size_t(rows * heads))};
    };
    setUp(entropy_, layers);
    setUp(jsd_, std::max<int64_t>(layers - 1, 0));
    initialised_ = true;
}

void CorpusAccumulator::add(const TextAnalysis& text, uint64_t textIndex) {
    // one text's [L, H, T], [L-1, H, T], [T] -> pooled
    checkShapes(text);
    if (!initialised_) initialise(text.entropy.dim(0), text.entropy.dim(1));
    addStatistic(entropy_, 0, text.entropy, text.valid, textIndex);
    addStatistic(jsd_, 1, text.jsd, text.valid, textIndex);
    ++texts_;
    entropyList_.reset();
    jsdList_.reset();
}

void CorpusAccumulator::addStatistic(KeyedSample& sample, uint64_t statistic,
                                     const Tensor& perToken, const TokenMask& valid,
                                     uint64_t textIndex) {
    // [N, H, T], [T] -> each head's valid values offered to its sample
    const int64_t tokens = int64_t(valid.size());
    const float* data = perToken.data();
    for (std::size_t head = 0; head < sample.seen.size(); ++head)
        for (int64_t t = 0; t < tokens; ++t) {
            if (!valid[std::size_t(t)]) continue;
            const uint64_t position = (textIndex << 32) | uint64_t(t);
            ++sample.seen[head];
            offer(sample.kept[head], {samplingKey(options_.seed, statistic, head, position),
                                      position, data[int64_t(head) * tokens + t]});
        }
}

void CorpusAccumulator::offer(std::vector<KeyedValue>& kept, const KeyedValue& value) const {
    // one value -> kept, replacing the kept value with the largest key, or dropped
    const std::size_t cap = options_.maxValuesPerHead;
    if (cap == 0) return;
    if (kept.size() < cap) {
        kept.push_back(value);
        // Why: once full, the kept values form a max-heap by key, so the one to evict is first.
        if (kept.size() == cap) std::make_heap(kept.begin(), kept.end(), byKey);
        return;
    }
    if (!byKey(value, kept.front())) return;
    std::pop_heap(kept.begin(), kept.end(), byKey);
    kept.back() = value;
    std::push_heap(kept.begin(), kept.end(), byKey);
}

void CorpusAccumulator::merge(const CorpusAccumulator& other) {
    if (!(options_ == other.options_))
        throw std::invalid_argument("the corpus samples were drawn with other caps or seeds");
    if (!other.initialised_) return;
    if (!initialised_) initialise(other.entropy_.layers, other.entropy_.heads);
    if (entropy_.layers != other.entropy_.layers || entropy_.heads != other.entropy_.heads)
        throw std::invalid_argument("the corpus samples have other numbers of layers or heads");
    for (auto [mine, theirs] :
         {std::pair{&entropy_, &other.entropy_}, std::pair{&jsd_, &other.jsd_}})
        for (std::size_t head = 0; head < mine->kept.size(); ++head) {
            mine->seen[head] += theirs->seen[head];
            for (const KeyedValue& value : theirs->kept[head])
                offer(mine->kept[head], value);
        }
    texts_ += other.texts_;
    entropyList_.reset();
    jsdList_.reset();
}

const HeadValues& CorpusAccumulator::listed(const KeyedSample& sample,
                                            std::optional<HeadValues>& cache) const {
    if (!cache) {
        cache = HeadValues{sample.layers, sample.heads, {}};
        for (const std::vector<KeyedValue>& kept : sample.kept)
            cache->values.push_back(inCorpusOrder(kept));
    }
    return *cache;
}

const HeadValues& CorpusAccumulator::entropy() const {
    return listed(entropy_, entropyList_);
}

const HeadValues& CorpusAccumulator::jsd() const {
    return listed(jsd_, jsdList_);
}

uint64_t CorpusAccumulator::entropySeen(int64_t layer, int64_t head) const {
    return entropy_.seen.at(std::size_t(layer * entropy_.heads + head));
}

uint64_t CorpusAccumulator::jsdSeen(int64_t layer, int64_t head) const {
    return jsd_.seen.at(std::size_t(layer * jsd_.heads + head));
}

CorpusResult aggregateCorpus(const std::vector<std::string>& texts, const AnalyseText& analyseOne,
                             const CorpusProgress& progress, const std::atomic<bool>& cancel,
                             const CorpusOptions& options, std::size_t firstIndex) {
    // texts -> pooled [L, H] entropy and [L-1, H] JSD value lists
    CorpusResult result{CorpusAccumulator(options), 0, texts.size(), false, {}};
    for (std::size_t index = 0; index < texts.size(); ++index) {
        if (cancel.load()) {
            result.cancelled = true;
            break;
        }
        try {
            result.accumulated.add(analyseOne(texts[index]), firstIndex + index);
        } catch (...) {
            result.errors.push_back({firstIndex + index, currentExceptionMessage()});
        }
        result.attempted = index + 1;
        if (progress) progress(result.attempted, result.total);
    }
    return result;
}
} // namespace headlight::analysis
