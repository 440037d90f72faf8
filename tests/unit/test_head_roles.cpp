// The head-role scores of core/analysis/head_roles.h on hand-built attention, where each score is
// known exactly: a perfect previous-token map scores 1 under TransformerLens's "mul" measure, a
// map that attends to the previous copy of each token scores 1 as duplicate-token head, one that
// attends to the token after it 1 as induction head; the detection patterns against the
// definitions of transformer_lens/head_detector.py; the generated probes are the same for a seed.
#include "analysis/head_roles.h"

#include <QTest>
#include <cmath>

using namespace headlight;
using namespace headlight::analysis;

namespace {

// NaN-safe: a NaN on either side fails.
bool roleScoreNear(double actual, double expected, double tolerance = 1e-12) {
    return std::isfinite(actual) && std::isfinite(expected) &&
           std::abs(actual - expected) <= tolerance;
}

// [1, 1, T, T] whose query i puts all its weight on key target(i).
template <class Target> Tensor oneHotRoleMap(int64_t tokens, Target target) {
    Tensor map({1, 1, tokens, tokens});
    for (int64_t i = 0; i < tokens; ++i)
        map.values()[std::size_t(i * tokens + target(i))] = 1.0f;
    return map;
}

HeadRoleScores scoreOneHead(const std::vector<int32_t>& ids, const Tensor& map) {
    HeadRoleAccumulator accumulator(1, 1);
    accumulator.add(ids, map);
    return accumulator.scores().front();
}

} // namespace

class TestHeadRoles : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void patternsFollowTheDetectorsDefinitions() {
        // ids 5 7 5 5 7: query 2 repeats key 0; query 3 keys 0 and 2; query 4 key 1.
        const std::vector<int32_t> ids{5, 7, 5, 5, 7};
        const DetectionPattern previous = previousTokenPattern(5);
        const DetectionPattern duplicate = duplicateTokenPattern(ids);
        const DetectionPattern induction = inductionPattern(ids);
        std::vector<int> prev, dup, ind;
        for (int k = 0; k < 25; ++k) {
            if (previous[std::size_t(k)]) prev.push_back(k);
            if (duplicate[std::size_t(k)]) dup.push_back(k);
            if (induction[std::size_t(k)]) ind.push_back(k);
        }
        QCOMPARE(prev, (std::vector<int>{5, 11, 17, 23})); // (1,0) (2,1) (3,2) (4,3)
        QCOMPARE(dup, (std::vector<int>{10, 15, 17, 21})); // (2,0) (3,0) (3,2) (4,1)
        // Shifted one key right: (2,1) (3,1) (3,3) (4,2); (3,3) is the diagonal, kept by the tril.
        QCOMPARE(ind, (std::vector<int>{11, 16, 18, 22}));
    }

    void previousTokenMapWithItsFirstQueryOnItself() {
        // Query 0 can only attend to itself; every other query to the key before it.
        const std::vector<int32_t> ids{3, 1, 4, 1, 5, 9, 2, 6};
        const Tensor map = oneHotRoleMap(8, [](int64_t i) { return i == 0 ? 0 : i - 1; });
        const HeadRoleScores s = scoreOneHead(ids, map);
        // "mul" divides by the whole map's sum (8 rows): query 0's weight is on no pattern key.
        QVERIFY(roleScoreNear(s.previousToken, 7.0 / 8.0));
        QVERIFY(roleScoreNear(s.positional, 1.0));
        QCOMPARE(s.positionalOffset, 1);
        QVERIFY(roleScoreNear(s.sink, 2.0 / 8.0)); // queries 0 and 1 attend to the first token
        // Only id 1 repeats (keys 1 and 3), and query 3 attends to key 2 (id 4).
        QVERIFY(roleScoreNear(s.duplicateToken, 0.0));
    }

    void perfectPreviousTokenMapScoresOne() {
        // The detection pattern itself as the map (query 0 empty): every unit of weight matches.
        const std::vector<int32_t> ids{3, 1, 4, 1, 5};
        Tensor map({1, 1, 5, 5});
        for (int64_t i = 1; i < 5; ++i)
            map.values()[std::size_t(i * 5 + i - 1)] = 1.0f;
        const DetectionPattern pattern = previousTokenPattern(5);
        QVERIFY(roleScoreNear(patternScore(map.values().data(), pattern, 5), 1.0));
    }

    void repeatedSequencesScoreDuplicateAndInduction() {
        // 4 tokens repeated: query i >= 4 attends to its earlier copy (i - 4), or to the token
        // after it.
        const std::vector<int32_t> ids{10, 11, 12, 13, 10, 11, 12, 13};
        const Tensor duplicateHead = oneHotRoleMap(8, [](int64_t i) { return i < 4 ? 0 : i - 4; });
        const Tensor inductionHead = oneHotRoleMap(8, [](int64_t i) { return i < 4 ? 0 : i - 3; });
        const HeadRoleScores d = scoreOneHead(ids, duplicateHead);
        const HeadRoleScores n = scoreOneHead(ids, inductionHead);
        QVERIFY(roleScoreNear(d.duplicateToken, 0.5));
        QVERIFY(roleScoreNear(d.induction, 0.0));
        QVERIFY(roleScoreNear(n.induction, 0.5));
        QVERIFY(roleScoreNear(n.duplicateToken, 0.0));
        // The duplicate head sits at offset 4 on the second half: mean of 4 ones over 4 queries.
        QCOMPARE(d.positionalOffset, 4);
        QVERIFY(roleScoreNear(d.positional, 1.0));
        // Queries 4..7 at offset 3, and query 3 too, whose weight is on key 0.
        QCOMPARE(n.positionalOffset, 3);
        QVERIFY(roleScoreNear(n.positional, 1.0));
    }

    void scoresAreMeansOverSequences() {
        // A uniform causal map on one sequence and a previous-token map on another.
        const std::vector<int32_t> a{1, 2, 3, 4}, b{5, 6, 7, 8};
        Tensor uniform({1, 1, 4, 4});
        for (int64_t i = 0; i < 4; ++i)
            for (int64_t j = 0; j <= i; ++j)
                uniform.values()[std::size_t(i * 4 + j)] = float(1.0 / double(i + 1));
        HeadRoleAccumulator accumulator(1, 1);
        accumulator.add(a, uniform);
        accumulator.add(b, oneHotRoleMap(4, [](int64_t i) { return i == 0 ? 0 : i - 1; }));
        QCOMPARE(accumulator.sequences(), 2);
        const HeadRoleScores s = accumulator.scores().front();
        const double uniformPrevious = (0.5 + 1.0 / 3.0 + 0.25) / 4.0;
        QVERIFY(roleScoreNear(s.previousToken, (uniformPrevious + 0.75) / 2.0, 1e-7));
        const double uniformSink = (1.0 + 0.5 + 1.0 / 3.0 + 0.25) / 4.0;
        QVERIFY(roleScoreNear(s.sink, (uniformSink + 0.5) / 2.0, 1e-7));
    }

    void badShapesAndEmptyAccumulatorsAreRefused() {
        HeadRoleAccumulator accumulator(2, 3);
        QVERIFY_THROWS_EXCEPTION(std::logic_error, accumulator.scores());
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, accumulator.add({1}, Tensor({2, 3, 1, 1})));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 accumulator.add({1, 2}, Tensor({2, 2, 2, 2})));
    }

    void aZeroMapScoresNaNAndTheComparisonFailsIt() {
        const Tensor zero({1, 1, 3, 3});
        const double score = patternScore(zero.values().data(), previousTokenPattern(3), 3);
        QVERIFY(std::isnan(score));
        QVERIFY(!roleScoreNear(score, 0.0));
    }

    void aCustomPatternScoresAsTheDetectorsMulMeasure() {
        // Query i splits its weight: 3/4 on key i-1, 1/4 on key 0 (query 0: all on itself).
        const int64_t t = 4;
        Tensor map({1, 1, t, t});
        map.values()[0] = 1.0f;
        for (int64_t i = 1; i < t; ++i) {
            map.values()[std::size_t(i * t + i - 1)] += 0.75f;
            map.values()[std::size_t(i * t)] += 0.25f;
        }
        // The previous-token pattern as a user's pattern, and one weighing key 0 by 2.
        CustomPattern previous{t, std::vector<float>(std::size_t(t * t), 0.0f)};
        for (int64_t i = 1; i < t; ++i)
            previous.weights[std::size_t(i * t + i - 1)] = 1.0f;
        HeadRoleAccumulator accumulator(1, 1, previous);
        accumulator.add({1, 2, 3, 4}, map);
        const HeadRoleScores scores = accumulator.scores().front();
        QVERIFY(scores.custom.has_value());
        QVERIFY(roleScoreNear(*scores.custom, scores.previousToken));
        // Weight 2 on key 0 for every query: Σ A·P / Σ A = 2 · (key 0's column) / T.
        CustomPattern sinkTwice{t, std::vector<float>(std::size_t(t * t), 0.0f)};
        for (int64_t i = 0; i < t; ++i)
            sinkTwice.weights[std::size_t(i * t)] = 2.0f;
        // Key 0's column: query 0's 1, query 1's 0.75 + 0.25 (its previous token is key 0), 0.25,
        // 0.25.
        const double keyZero = 1.0 + 1.0 + 0.25 + 0.25;
        QVERIFY(
            roleScoreNear(patternScore(map.values().data(), sinkTwice), 2.0 * keyZero / 4.0, 1e-7));
        QVERIFY(!scoreOneHead({1, 2, 3, 4}, map).custom.has_value());
    }

    void badCustomPatternsAreRefusedNamingTheCell() {
        CustomPattern pattern{3, std::vector<float>(9, 0.0f)};
        pattern.weights[1] = 1.0f; // row 0, column 1: above the diagonal
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, checkCustomPattern(pattern));
        try {
            checkCustomPattern(pattern);
        } catch (const std::invalid_argument& error) {
            QVERIFY2(QString(error.what()).contains("row 0, column 1 lies above the diagonal"),
                     error.what());
        }
        pattern.weights[1] = 0.0f;
        pattern.weights[7] = NAN; // row 2, column 1
        try {
            checkCustomPattern(pattern);
            QFAIL("a NaN cell was accepted");
        } catch (const std::invalid_argument& error) {
            QVERIFY2(QString(error.what()).contains("row 2, column 1 is not a finite number"),
                     error.what());
        }
        pattern.weights[7] = 0.0f;
        HeadRoleAccumulator accumulator(1, 1, pattern);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 accumulator.add({1, 2, 3, 4}, Tensor({1, 1, 4, 4}, 0.25f)));
    }

    void generatedProbesAreRepeatedDistinctAndDeterministic() {
        const auto first = repeatedRandomProbes(7, 5, 12, 300, 0);
        QVERIFY(first == repeatedRandomProbes(7, 5, 12, 300, 0));
        QVERIFY(first != repeatedRandomProbes(8, 5, 12, 300, 0));
        QCOMPARE(first.size(), std::size_t(5));
        for (const auto& probe : first) {
            QCOMPARE(probe.size(), std::size_t(24));
            const std::vector<int32_t> half(probe.begin(), probe.begin() + 12);
            QVERIFY(std::equal(half.begin(), half.end(), probe.begin() + 12));
            std::vector<int32_t> sorted = half;
            std::sort(sorted.begin(), sorted.end());
            QVERIFY(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
            QVERIFY(sorted.front() >= 1 && sorted.back() < 300); // never the excluded id 0
        }
        // A vocabulary of 10 ids less the excluded one cannot give 10 distinct tokens.
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, repeatedRandomProbes(0, 1, 10, 10, 3));
        QCOMPARE(repeatedRandomProbes(0, 1, 9, 10, 3).front().size(), std::size_t(18));
    }
};

HEADLIGHT_TEST_APPLESS_MAIN(TestHeadRoles)
#include "test_head_roles.moc"
