// The attention analysis library against independent expectations: closed forms (ln n, JSD of
// disjoint rows = 1 bit), small cases worked by hand in the comments, and invariances (padding).
#include "analysis/clustering.h"
#include "analysis/divergence.h"
#include "analysis/rollout.h"
#include "analysis/sparsity.h"

#include <QTest>
#include <algorithm>
#include <cmath>
#include <span>

using namespace headlight;
using namespace headlight::analysis;

namespace {
constexpr double kTight = 1e-6;

bool near(double actual, double expected, double tolerance = kTight) {
    return std::abs(actual - expected) <= tolerance;
}

// [L, H, T, T] where every head of every layer has the same T × T block.
Tensor repeatBlock(int64_t layers, int64_t heads, int64_t tokens, const std::vector<float>& block) {
    std::vector<float> values;
    for (int64_t i = 0; i < layers * heads; ++i)
        values.insert(values.end(), block.begin(), block.end());
    return Tensor({layers, heads, tokens, tokens}, values);
}

// [L, H, T, T] from one T × T block per head, layer-major.
Tensor fromBlocks(int64_t layers, int64_t heads, int64_t tokens,
                  const std::vector<std::vector<float>>& blocks) {
    std::vector<float> values;
    for (const auto& block : blocks)
        values.insert(values.end(), block.begin(), block.end());
    return Tensor({layers, heads, tokens, tokens}, values);
}

float at(const Tensor& t, std::vector<int64_t> index) {
    int64_t offset = 0;
    for (std::size_t axis = 0; axis < index.size(); ++axis)
        offset = offset * t.dim(axis) + index[axis];
    return t.data()[offset];
}

// A 2-layer, 2-head, 4-token capture whose last token is padding, with distinct rows per head.
Tensor paddedCapture() {
    // Rows over keys 0..2 (key 3 is padding, probability 0); query 3's row is padding too.
    const std::vector<float> a{1,    0,    0,    0, 0.5f,  0.5f,  0,     0,
                               0.2f, 0.3f, 0.5f, 0, 0.25f, 0.25f, 0.25f, 0.25f};
    const std::vector<float> b{0.6f, 0.4f, 0, 0, 0.1f, 0.9f, 0, 0, 0.3f, 0.3f, 0.4f, 0, 0, 0, 0, 1};
    const std::vector<float> c{0.3f, 0.3f, 0.4f, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0};
    const std::vector<float> d{0.5f, 0.25f, 0.25f, 0, 0,    1, 0, 0,
                               0.1f, 0.1f,  0.8f,  0, 0.5f, 0, 0, 0.5f};
    return fromBlocks(2, 2, 4, {a, b, c, d});
}

// The same capture with every padded query row (query 3 of each head) replaced by other numbers.
Tensor paddedCaptureWithOtherPaddedRows() {
    Tensor changed = paddedCapture();
    for (int64_t head = 0; head < 4; ++head)
        for (int64_t key = 0; key < 4; ++key)
            changed.data()[head * 16 + 12 + key] = key == 1 ? 0.9f : 0.7f;
    return changed;
}

bool sameValues(const Tensor& a, const Tensor& b) {
    return a.shape() == b.shape() &&
           std::equal(a.values().begin(), a.values().end(), b.values().begin());
}

int64_t positionOf(const std::vector<int64_t>& order, int64_t leaf) {
    return int64_t(std::find(order.begin(), order.end(), leaf) - order.begin());
}
} // namespace

class TestAnalysis : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // --- entropy (nats) ---

    void uniformRowHasEntropyLogN() {
        const std::vector<float> row{0.25f, 0.25f, 0.25f, 0.25f};
        QVERIFY(near(rowEntropyNats(row), std::log(4.0)));
        const std::vector<float> tenth(10, 0.1f);
        QVERIFY(near(rowEntropyNats(tenth), std::log(10.0)));
    }

    void oneHotRowHasZeroEntropy() {
        const std::vector<float> row{0, 0, 1, 0};
        QCOMPARE(rowEntropyNats(row), 0.0);
    }

    void entropyIgnoresPaddedKeys() {
        // Three real keys at 1/3 and a padded key whose (contract-breaking) value must not count.
        const std::vector<float> row{1 / 3.f, 1 / 3.f, 1 / 3.f, 0.5f};
        QVERIFY(near(rowEntropyNats(row, {1, 1, 1, 0}), std::log(3.0)));
    }

    void entropyTensorHasShapeAndZerosForPaddedQueries() {
        // One layer, one head, T = 3, token 2 padded: rows uniform over 2 keys and one-hot.
        const Tensor attention({1, 1, 3, 3}, {0.5f, 0.5f, 0, 1, 0, 0, 0.3f, 0.3f, 0.4f});
        const Tensor entropy = attentionEntropy(attention, {1, 1, 0});
        QCOMPARE(entropy.shape(), (std::vector<int64_t>{1, 1, 3}));
        QVERIFY(near(at(entropy, {0, 0, 0}), std::log(2.0)));
        QCOMPARE(at(entropy, {0, 0, 1}), 0.0f);
        QCOMPARE(at(entropy, {0, 0, 2}), 0.0f);
    }

    void singleLayerInputDropsTheLayerAxis() {
        const Tensor layer({2, 2, 2}, {1, 0, 0, 1, 0.5f, 0.5f, 0.5f, 0.5f});
        const Tensor entropy = attentionEntropy(layer, allValid(2));
        QCOMPARE(entropy.shape(), (std::vector<int64_t>{2, 2}));
        QVERIFY(near(entropy.data()[2], std::log(2.0)));
        QCOMPARE(headJsdMatrix(layer, allValid(2)).shape(), (std::vector<int64_t>{2, 2}));
    }

    void rejectsBadShapesAndMasks() {
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 attentionEntropy(Tensor({2, 3, 3}), {1, 1}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 attentionEntropy(Tensor({1, 2, 3, 4}), {1, 1, 1}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 attentionEntropy(Tensor({3, 3}), {1, 1, 1}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 adjacentLayerJsd(Tensor({1, 3, 3}), {1, 1, 1}));
    }

    // --- Jensen-Shannon divergence (bits) ---

    void jsdOfIdenticalRowsIsZero() {
        const std::vector<float> row{0.2f, 0.3f, 0.5f};
        QCOMPARE(jensenShannonBits(row, row), 0.0);
    }

    void jsdOfDisjointOneHotsIsOneBit() {
        const std::vector<float> p{1, 0, 0};
        const std::vector<float> q{0, 0, 1};
        QVERIFY(near(jensenShannonBits(p, q), 1.0, 1e-12));
    }

    void jsdWorkedByHand() {
        // P = (1, 0), Q = (½, ½), M = (¾, ¼).
        // KL(P‖M) = 1·log2(1 / ¾) = 2 - log2 3.
        // KL(Q‖M) = ½ log2(½ / ¾) + ½ log2(½ / ¼) = ½(1 - log2 3) + ½ = 1 - ½ log2 3.
        // JSD = ½(2 - log2 3) + ½(1 - ½ log2 3) = 1.5 - ¾ log2 3 ≈ 0.3112781 bits.
        const std::vector<float> p{1, 0};
        const std::vector<float> q{0.5f, 0.5f};
        QVERIFY(near(jensenShannonBits(p, q), 0.3112781));
        QVERIFY(near(jensenShannonBits(p, q), 1.5 - 0.75 * std::log2(3.0), 1e-12));
    }

    void jsdIsSymmetricAndAtMostOne() {
        const std::vector<std::vector<float>> rows{
            {0.7f, 0.2f, 0.1f, 0}, {0, 0, 0.5f, 0.5f}, {0.25f, 0.25f, 0.25f, 0.25f}, {0, 1, 0, 0}};
        for (const auto& p : rows)
            for (const auto& q : rows) {
                const double forward = jensenShannonBits(p, q);
                QCOMPARE(forward, jensenShannonBits(q, p));
                QVERIFY(forward >= 0.0 && forward <= 1.0);
            }
    }

    void jsdIgnoresPaddedKeys() {
        // Only key 2 differs, and it is padding: over the real keys the rows are identical.
        const std::vector<float> p{0.5f, 0.5f, 0};
        const std::vector<float> q{0.5f, 0.5f, 0.9f};
        QCOMPARE(jensenShannonBits(p, q, {1, 1, 0}), 0.0);
    }

    void adjacentLayerJsdComparesSameHeadInNextLayer() {
        // L = 3, H = 1, T = 2. Layer 0 rows (1,0); layer 1 rows (½,½); layer 2 rows (½,½):
        // layers 0→1 give the hand-worked 1.5 - ¾ log2 3, layers 1→2 give 0.
        const std::vector<float> oneHot{1, 0, 1, 0};
        const std::vector<float> half{0.5f, 0.5f, 0.5f, 0.5f};
        const Tensor attention = fromBlocks(3, 1, 2, {oneHot, half, half});
        const Tensor jsd = adjacentLayerJsd(attention, allValid(2));
        QCOMPARE(jsd.shape(), (std::vector<int64_t>{2, 1, 2}));
        QVERIFY(near(at(jsd, {0, 0, 1}), 1.5 - 0.75 * std::log2(3.0)));
        QCOMPARE(at(jsd, {1, 0, 0}), 0.0f);
    }

    // --- padding invariance ---

    void changingAPaddedQueryRowChangesNothing() {
        const TokenMask valid{1, 1, 1, 0};
        const Tensor original = paddedCapture();
        const Tensor changed = paddedCaptureWithOtherPaddedRows();
        QVERIFY(sameValues(attentionEntropy(original, valid), attentionEntropy(changed, valid)));
        QVERIFY(sameValues(adjacentLayerJsd(original, valid), adjacentLayerJsd(changed, valid)));
        QVERIFY(sameValues(headJsdMatrix(original, valid), headJsdMatrix(changed, valid)));
        QVERIFY(sameValues(attentionRollout(original, valid), attentionRollout(changed, valid)));
        const SparsityStats a = attentionSparsity(original, valid, {2, 0.2f, 0.9f});
        const SparsityStats b = attentionSparsity(changed, valid, {2, 0.2f, 0.9f});
        QVERIFY(sameValues(a.topKMass, b.topKMass));
        QVERIFY(sameValues(a.shareAboveThreshold, b.shareAboveThreshold));
        QVERIFY(sameValues(a.keysForMass, b.keysForMass));
    }

    void paddedQueriesAreZeroInPerTokenOutputs() {
        const TokenMask valid{1, 1, 1, 0};
        const Tensor entropy = attentionEntropy(paddedCaptureWithOtherPaddedRows(), valid);
        const Tensor jsd = adjacentLayerJsd(paddedCaptureWithOtherPaddedRows(), valid);
        for (int64_t h = 0; h < 2; ++h) {
            QCOMPARE(at(entropy, {0, h, 3}), 0.0f);
            QCOMPARE(at(entropy, {1, h, 3}), 0.0f);
            QCOMPARE(at(jsd, {0, h, 3}), 0.0f);
        }
    }

    // --- head × head JSD matrix and clustering ---

    void headMatrixIsSymmetricWithZeroDiagonal() {
        const TokenMask valid{1, 1, 1, 0};
        const Tensor matrix = headJsdMatrix(paddedCapture(), valid);
        QCOMPARE(matrix.shape(), (std::vector<int64_t>{4, 4}));
        for (int64_t i = 0; i < 4; ++i) {
            QCOMPARE(at(matrix, {i, i}), 0.0f);
            for (int64_t j = 0; j < 4; ++j)
                QCOMPARE(at(matrix, {i, j}), at(matrix, {j, i}));
        }
    }

    void headMatrixEntryIsMeanOfRowJsdOverValidQueries() {
        // Independent path: the matrix uses H(m) - ½H(p) - ½H(q); here the KL form, query by query.
        const TokenMask valid{1, 1, 1, 0};
        const Tensor attention = paddedCapture();
        const Tensor matrix = headJsdMatrix(attention, valid);
        const auto row = [&](int64_t head, int64_t query) {
            return std::span<const float>(attention.data() + head * 16 + query * 4, 4);
        };
        for (int64_t i = 0; i < 4; ++i)
            for (int64_t j = 0; j < 4; ++j) {
                double sum = 0.0;
                for (int64_t q = 0; q < 3; ++q)
                    sum += jensenShannonBits(row(i, q), row(j, q), valid);
                QVERIFY(near(at(matrix, {i, j}), sum / 3.0));
            }
    }

    void headMatrixWorkedByHand() {
        // Head 0 rows are all (1, 0), head 1 rows all (½, ½): every query gives 1.5 - ¾ log2 3.
        const Tensor attention = fromBlocks(1, 2, 2, {{1, 0, 1, 0}, {0.5f, 0.5f, 0.5f, 0.5f}});
        const Tensor matrix = headJsdMatrix(attention, allValid(2));
        QVERIFY(near(at(matrix, {0, 1}), 1.5 - 0.75 * std::log2(3.0)));
    }

    void clusteringPutsIdenticalHeadsSideBySide() {
        // Heads 0 and 3 attend identically (one-hot on key 0); 1 is uniform, 2 one-hot on key 2.
        const std::vector<float> first{1, 0, 0, 1, 0, 0, 1, 0, 0};
        const std::vector<float> uniform(9, 1 / 3.f);
        const std::vector<float> last{0, 0, 1, 0, 0, 1, 0, 0, 1};
        const Tensor attention = fromBlocks(2, 2, 3, {first, uniform, last, first});
        const Tensor matrix = headJsdMatrix(attention, allValid(3));
        QCOMPARE(at(matrix, {0, 3}), 0.0f);
        const Dendrogram tree = averageLinkage(matrix);
        QCOMPARE(tree.leafOrder.size(), std::size_t(4));
        QCOMPARE(std::abs(positionOf(tree.leafOrder, 0) - positionOf(tree.leafOrder, 3)),
                 int64_t(1));
        QCOMPARE(tree.merges.front().left, int64_t(0));
        QCOMPARE(tree.merges.front().right, int64_t(3));
    }

    void averageLinkageWorkedByHand() {
        // Points on a line at 0, 1, 3. Closest pair (0, 1) merges at 1 into cluster 3; then the
        // average linkage distance to point 2 is (|0-3| + |1-3|) / 2 = 2.5 (single would say 2,
        // complete 3).
        const Tensor distances({3, 3}, {0, 1, 3, 1, 0, 2, 3, 2, 0});
        const Dendrogram tree = averageLinkage(distances);
        QCOMPARE(tree.merges.size(), std::size_t(2));
        QCOMPARE(tree.merges[0].left, int64_t(0));
        QCOMPARE(tree.merges[0].right, int64_t(1));
        QCOMPARE(tree.merges[0].distance, 1.0);
        QCOMPARE(tree.merges[1].left, int64_t(3));
        QCOMPARE(tree.merges[1].right, int64_t(2));
        QCOMPARE(tree.merges[1].distance, 2.5);
        QCOMPARE(tree.merges[1].size, int64_t(3));
        QCOMPARE(tree.leafOrder, (std::vector<int64_t>{0, 1, 2}));
    }

    void averageLinkageBreaksTiesDeterministically() {
        // Leaves at positions 5, 0, 6, 1: pairs (0, 2) and (1, 3) are both 1 apart; the pair with
        // the smaller first leaf merges first. The two pairs then join at the mean of
        // |5-0|, |5-1|, |6-0|, |6-1| = (5 + 4 + 6 + 5) / 4 = 5.
        const Tensor distances({4, 4}, {0, 5, 1, 4, 5, 0, 6, 1, 1, 6, 0, 5, 4, 1, 5, 0});
        const Dendrogram tree = averageLinkage(distances);
        QCOMPARE(tree.merges[0].left, int64_t(0));
        QCOMPARE(tree.merges[0].right, int64_t(2));
        QCOMPARE(tree.merges[1].left, int64_t(1));
        QCOMPARE(tree.merges[1].right, int64_t(3));
        QCOMPARE(tree.merges[2].distance, 5.0);
        QCOMPARE(tree.leafOrder, (std::vector<int64_t>{0, 2, 1, 3}));
        QCOMPARE(averageLinkage(distances).leafOrder, tree.leafOrder);
    }

    void averageLinkageEdgeCases() {
        QVERIFY(averageLinkage(Tensor({0, 0})).leafOrder.empty());
        QCOMPARE(averageLinkage(Tensor({1, 1})).leafOrder, (std::vector<int64_t>{0}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, averageLinkage(Tensor({2, 3})));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 averageLinkage(Tensor({2, 2}, {0, NAN, NAN, 0})));
    }

    // --- attention rollout ---

    void rolloutOfIdentityAttentionIsIdentity() {
        const Tensor attention = repeatBlock(3, 2, 3, {1, 0, 0, 0, 1, 0, 0, 0, 1});
        const Tensor rollout = attentionRollout(attention, allValid(3));
        for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 3; ++j)
                QCOMPARE(at(rollout, {i, j}), i == j ? 1.0f : 0.0f);
    }

    void rolloutRowsSumToOne() {
        const TokenMask valid{1, 1, 1, 0};
        const Tensor rollout = attentionRollout(paddedCapture(), valid);
        for (int64_t i = 0; i < 3; ++i) {
            double sum = 0.0;
            for (int64_t j = 0; j < 4; ++j)
                sum += at(rollout, {i, j});
            QVERIFY(near(sum, 1.0));
        }
    }

    void rolloutWorkedByHand() {
        // T = 2. Layer 1 has two heads, [[0,1],[0,1]] and [[1,0],[1,0]]: mean [[½,½],[½,½]],
        // Â1 = ½ mean + ½ I = [[¾,¼],[¼,¾]]. Layer 2's heads are both [[1,0],[1,0]]:
        // Â2 = [[1,0],[½,½]]. Rollout = Â2 Â1 = [[¾, ¼], [½·¾ + ½·¼, ½·¼ + ½·¾]] = [[¾,¼],[½,½]]
        // (the other order, Â1 Â2, would give [[⅞,⅛],[⅝,⅜]]).
        const std::vector<float> toSecond{0, 1, 0, 1};
        const std::vector<float> toFirst{1, 0, 1, 0};
        const Tensor attention = fromBlocks(2, 2, 2, {toSecond, toFirst, toFirst, toFirst});
        const Tensor rollout = attentionRollout(attention, allValid(2));
        QVERIFY(near(at(rollout, {0, 0}), 0.75));
        QVERIFY(near(at(rollout, {0, 1}), 0.25));
        QVERIFY(near(at(rollout, {1, 0}), 0.5));
        QVERIFY(near(at(rollout, {1, 1}), 0.5));
    }

    void rolloutZeroesPaddedRowsAndColumns() {
        const TokenMask valid{1, 1, 1, 0};
        const Tensor rollout = attentionRollout(paddedCaptureWithOtherPaddedRows(), valid);
        for (int64_t i = 0; i < 4; ++i) {
            QCOMPARE(at(rollout, {3, i}), 0.0f);
            QCOMPARE(at(rollout, {i, 3}), 0.0f);
        }
    }

    // --- sparsity ---

    void topKMassOfUniformIsKOverN() {
        // Four real keys at ¼ and one padded key.
        const std::vector<float> row{0.25f, 0.25f, 0.25f, 0.25f, 0};
        const TokenMask valid{1, 1, 1, 1, 0};
        QVERIFY(near(topKMass(row, valid, 1), 0.25));
        QVERIFY(near(topKMass(row, valid, 3), 0.75));
        QVERIFY(near(topKMass(row, valid, 9), 1.0)); // k clamped to the valid keys
    }

    void thresholdShareCountsValidKeysOnly() {
        // 4 of 4 valid keys exceed 0.2; counting the padded key too would give 4 / 5.
        const std::vector<float> row{0.25f, 0.25f, 0.25f, 0.25f, 0};
        QCOMPARE(shareAboveThreshold(row, {1, 1, 1, 1, 0}, 0.2f), 1.0);
        const std::vector<float> skewed{0.5f, 0.3f, 0.2f};
        QVERIFY(near(shareAboveThreshold(skewed, allValid(3), 0.25f), 2.0 / 3.0));
    }

    void keysForMassWorkedByHand() {
        // (0.5, 0.3, 0.2): 0.5 < 0.75 ≤ 0.8, so 2 keys cover 75 %; 90 % needs all 3.
        const std::vector<float> row{0.2f, 0.5f, 0.3f};
        QCOMPARE(keysForMass(row, allValid(3), 0.75f), int64_t(2));
        QCOMPARE(keysForMass(row, allValid(3), 0.9f), int64_t(3));
        // Uniform over 10 keys: 9 keys carry exactly 0.9.
        QCOMPARE(keysForMass(std::vector<float>(10, 0.1f), allValid(10), 0.9f), int64_t(9));
    }

    void sparsityAveragesOverValidQueries() {
        // One head, T = 3, token 2 padded. Query 0 one-hot, query 1 uniform over keys 0 and 1.
        // Top-1: (1 + ½) / 2 = ¾. Share > 0.4: (½ + 1) / 2 = ¾. Keys for 90 %: (1 + 2) / 2 = 1.5.
        const Tensor attention({1, 1, 3, 3}, {1, 0, 0, 0.5f, 0.5f, 0, 0.1f, 0.1f, 0.8f});
        const SparsityStats stats = attentionSparsity(attention, {1, 1, 0}, {1, 0.4f, 0.9f});
        QCOMPARE(stats.topKMass.shape(), (std::vector<int64_t>{1, 1}));
        QVERIFY(near(stats.topKMass.data()[0], 0.75));
        QVERIFY(near(stats.shareAboveThreshold.data()[0], 0.75));
        QVERIFY(near(stats.keysForMass.data()[0], 1.5));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestAnalysis)
#include "test_analysis.moc"
