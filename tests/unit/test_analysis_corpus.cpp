// Corpus aggregation: the streaming accumulator (padding excluded, the per-head cap held by a
// deterministic bottom-k sample that shards of a corpus merge into exactly) and the driver
// (progress per text, prompt cancellation, one failing text recorded while the rest go on).
#include "analysis/corpus.h"

#include <QTest>
#include <algorithm>
#include <numeric>
#include <stdexcept>

using namespace headlight;
using namespace headlight::analysis;

namespace {
// One text's results for L layers and H heads over T real tokens, with entropy values
// start, start + 1, ... in [L, H, T] order and JSD values start + 1000, ...
TextAnalysis syntheticText(int64_t layers, int64_t heads, int64_t tokens, float start) {
    TextAnalysis text{Tensor({layers, heads, tokens}), Tensor({layers - 1, heads, tokens}),
                      allValid(tokens)};
    std::iota(text.entropy.values().begin(), text.entropy.values().end(), start);
    std::iota(text.jsd.values().begin(), text.jsd.values().end(), start + 1000.0f);
    return text;
}

std::vector<std::string> corpusOf(std::size_t count) {
    std::vector<std::string> texts;
    for (std::size_t i = 0; i < count; ++i)
        texts.push_back("text " + std::to_string(i));
    return texts;
}

// An analyser that returns a small [2, 1, 3] result for every text.
TextAnalysis analyseAnything(const std::string&) {
    return syntheticText(2, 1, 3, 0.0f);
}

// Feeds `texts` texts of 8 tokens each (values 0, 1, 2, ... across texts) into an accumulator.
CorpusAccumulator feedSequence(CorpusOptions options, int texts) {
    CorpusAccumulator accumulator(options);
    for (int i = 0; i < texts; ++i)
        accumulator.add(syntheticText(1, 1, 8, float(8 * i)));
    return accumulator;
}
// Texts first..end of the corpus feedSequence feeds, with their corpus indices.
CorpusAccumulator feedTexts(CorpusOptions options, int first, int end) {
    CorpusAccumulator accumulator(options);
    for (int i = first; i < end; ++i)
        accumulator.add(syntheticText(2, 2, 8, float(8 * i)), uint64_t(i));
    return accumulator;
}
} // namespace

class TestAnalysisCorpus : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void accumulatorPoolsValidTokensPerHead() {
        // [2, 2, 3] entropy with token 1 padded: head (1, 0) sees tokens 6 and 8 of each text.
        CorpusAccumulator accumulator;
        TextAnalysis text = syntheticText(2, 2, 3, 0.0f);
        text.valid = {1, 0, 1};
        accumulator.add(text);
        accumulator.add(text);
        QCOMPARE(accumulator.textCount(), std::size_t(2));
        QCOMPARE(accumulator.entropy().at(1, 0), (std::vector<float>{6, 8, 6, 8}));
        QCOMPARE(accumulator.entropySeen(1, 0), uint64_t(4));
        QCOMPARE(accumulator.jsd().layers, int64_t(1));
        QCOMPARE(accumulator.jsd().at(0, 1), (std::vector<float>{1003, 1005, 1003, 1005}));
    }

    void accumulatorRejectsMismatchedTextWithoutChange() {
        CorpusAccumulator accumulator;
        accumulator.add(syntheticText(2, 2, 3, 0.0f));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 accumulator.add(syntheticText(3, 2, 3, 0.0f)));
        TextAnalysis badJsd = syntheticText(2, 2, 3, 0.0f);
        badJsd.jsd = Tensor({2, 2, 3});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, accumulator.add(badJsd));
        TextAnalysis badMask = syntheticText(2, 2, 3, 0.0f);
        badMask.valid = {1, 1};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, accumulator.add(badMask));
        QCOMPARE(accumulator.textCount(), std::size_t(1));
        QCOMPARE(accumulator.entropy().at(0, 0).size(), std::size_t(3));
    }

    void belowTheCapEveryValueIsKeptInOrder() {
        const CorpusAccumulator accumulator = feedSequence({100, 1}, 3);
        std::vector<float> expected(24);
        std::iota(expected.begin(), expected.end(), 0.0f);
        QCOMPARE(accumulator.entropy().at(0, 0), expected);
    }

    void reservoirRespectsTheCap() {
        const CorpusAccumulator accumulator = feedSequence({10, 7}, 3);
        const std::vector<float>& kept = accumulator.entropy().at(0, 0);
        QCOMPARE(kept.size(), std::size_t(10));
        QCOMPARE(accumulator.entropySeen(0, 0), uint64_t(24));
        for (float v : kept)
            QVERIFY(v >= 0.0f && v < 24.0f); // only values that were fed
        std::vector<float> sorted = kept;
        std::sort(sorted.begin(), sorted.end());
        QVERIFY(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()); // no duplicates
    }

    void reservoirIsDeterministicForASeed() {
        const auto sample = [](uint64_t seed) {
            return feedSequence({10, seed}, 50).entropy().at(0, 0);
        };
        QCOMPARE(sample(42), sample(42));
        QVERIFY(sample(42) != sample(43));
    }

    void reservoirSamplesTheWholeStream() {
        // 1000 values 0..999, cap 100: a uniform sample has mean ≈ 499.5 (standard error ≈ 27)
        // and reaches past the first 100 values, which a sample that never replaces would not.
        const CorpusAccumulator accumulator = feedSequence({100, 2024}, 125);
        const std::vector<float>& kept = accumulator.entropy().at(0, 0);
        const double mean = std::accumulate(kept.begin(), kept.end(), 0.0) / double(kept.size());
        QVERIFY2(mean > 400.0 && mean < 600.0, qPrintable(QString::number(mean)));
        QVERIFY(*std::max_element(kept.begin(), kept.end()) >= 900.0f);
    }

    void shardsMergeToTheSampleOfOneRun() {
        // 30 texts × 8 values per head, cap 20: one run keeps 20 of 240; three shards of 10
        // texts each, merged in any order, must keep the same 20, listed the same way.
        const CorpusOptions options{20, 99};
        const CorpusAccumulator whole = feedTexts(options, 0, 30);
        const CorpusAccumulator a = feedTexts(options, 0, 10), b = feedTexts(options, 10, 20),
                                c = feedTexts(options, 20, 30);
        for (const auto& order : std::vector<std::vector<const CorpusAccumulator*>>{
                 {&a, &b, &c}, {&c, &a, &b}, {&b, &c, &a}}) {
            CorpusAccumulator merged(options);
            for (const CorpusAccumulator* shard : order)
                merged.merge(*shard);
            QCOMPARE(merged.textCount(), std::size_t(30));
            QCOMPARE(merged.entropy().values, whole.entropy().values);
            QCOMPARE(merged.jsd().values, whole.jsd().values);
            for (int64_t layer = 0; layer < 2; ++layer)
                for (int64_t head = 0; head < 2; ++head)
                    QCOMPARE(merged.entropySeen(layer, head), uint64_t(240));
        }
        QCOMPARE(whole.entropy().at(1, 1).size(), std::size_t(20));
        // The sample reaches every shard: a merge that kept one shard's values would not.
        const std::vector<float>& kept = whole.entropy().at(0, 0);
        QVERIFY(*std::min_element(kept.begin(), kept.end()) < 80.0f);
        QVERIFY(*std::max_element(kept.begin(), kept.end()) >= 160.0f);
    }

    void aRestoredSampleMergesLikeTheOriginal() {
        const CorpusOptions options{20, 5};
        const CorpusAccumulator a = feedTexts(options, 0, 12), b = feedTexts(options, 12, 30);
        CorpusAccumulator restored(options, a.entropySample(), a.jsdSample(), a.textCount());
        restored.merge(b);
        CorpusAccumulator original = a;
        original.merge(b);
        QCOMPARE(restored.entropy().values, original.entropy().values);
        QCOMPARE(restored.jsd().values, feedTexts(options, 0, 30).jsd().values);
    }

    void mismatchedSamplesAreRefused() {
        CorpusAccumulator merged({20, 5});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, merged.merge(feedTexts({20, 6}, 0, 2)));
        merged.merge(feedTexts({20, 5}, 0, 2));
        CorpusAccumulator other({20, 5});
        other.add(syntheticText(3, 2, 4, 0.0f), 7);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, merged.merge(other));
        KeyedSample tooMany = feedTexts({20, 5}, 0, 2).entropySample();
        tooMany.seen[0] = 3; // 16 kept of 3 seen
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            CorpusAccumulator({20, 5}, tooMany, feedTexts({20, 5}, 0, 2).jsdSample(), 2));
    }

    void progressIsReportedAfterEveryText() {
        std::vector<std::pair<std::size_t, std::size_t>> calls;
        const std::atomic<bool> cancel{false};
        const CorpusResult result = aggregateCorpus(
            corpusOf(4), analyseAnything,
            [&](std::size_t done, std::size_t total) {
                calls.push_back({done, total});
            },
            cancel);
        const std::vector<std::pair<std::size_t, std::size_t>> expected{
            {1, 4}, {2, 4}, {3, 4}, {4, 4}};
        QCOMPARE(calls, expected);
        QCOMPARE(result.attempted, std::size_t(4));
        QVERIFY(!result.cancelled);
        QCOMPARE(result.accumulated.textCount(), std::size_t(4));
        QCOMPARE(result.accumulated.entropy().at(1, 0).size(), std::size_t(12));
    }

    void cancellationStopsEarly() {
        // The flag goes up while text 1 is being analysed: text 1 still lands, text 2 never starts.
        std::atomic<bool> cancel{false};
        int analysed = 0;
        const AnalyseText analyse = [&](const std::string& text) {
            if (++analysed == 2) cancel = true;
            return analyseAnything(text);
        };
        const CorpusResult result = aggregateCorpus(corpusOf(10), analyse, {}, cancel);
        QVERIFY(result.cancelled);
        QCOMPARE(analysed, 2);
        QCOMPARE(result.attempted, std::size_t(2));
        QCOMPARE(result.total, std::size_t(10));
        QCOMPARE(result.accumulated.textCount(), std::size_t(2));
    }

    void cancelledBeforeStartDoesNothing() {
        const std::atomic<bool> cancel{true};
        int analysed = 0;
        const CorpusResult result = aggregateCorpus(
            corpusOf(3),
            [&](const std::string& text) {
                ++analysed;
                return analyseAnything(text);
            },
            {}, cancel);
        QVERIFY(result.cancelled);
        QCOMPARE(analysed, 0);
        QCOMPARE(result.attempted, std::size_t(0));
    }

    void aFailingTextIsRecordedAndTheRestGoOn() {
        const std::atomic<bool> cancel{false};
        std::size_t progressCalls = 0;
        const AnalyseText analyse = [](const std::string& text) {
            if (text == "text 1") throw std::runtime_error("tokenizer rejected text 1");
            if (text == "text 3") return syntheticText(3, 1, 3, 0.0f); // wrong layer count
            return analyseAnything(text);
        };
        const CorpusResult result = aggregateCorpus(
            corpusOf(5), analyse, [&](std::size_t, std::size_t) { ++progressCalls; }, cancel);
        QVERIFY(!result.cancelled);
        QCOMPARE(progressCalls, std::size_t(5));
        QCOMPARE(result.attempted, std::size_t(5));
        QCOMPARE(result.accumulated.textCount(), std::size_t(3));
        QCOMPARE(result.errors.size(), std::size_t(2));
        QCOMPARE(result.errors[0].index, std::size_t(1));
        QCOMPARE(QString::fromStdString(result.errors[0].message),
                 QString("tokenizer rejected text 1"));
        QCOMPARE(result.errors[1].index, std::size_t(3));
    }

    void driverHonoursTheCap() {
        const std::atomic<bool> cancel{false};
        const CorpusResult result =
            aggregateCorpus(corpusOf(6), analyseAnything, {}, cancel, {5, 9});
        QCOMPARE(result.accumulated.entropy().at(0, 0).size(), std::size_t(5));
        QCOMPARE(result.accumulated.entropySeen(0, 0), uint64_t(18));
        QCOMPARE(result.accumulated.options().maxValuesPerHead, std::size_t(5));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestAnalysisCorpus)
#include "test_analysis_corpus.moc"
