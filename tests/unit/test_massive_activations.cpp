// The selection logic of analysis/massive_activations.h and attention_sinks.h on hand-built
// tensors whose answers are known exactly: the largest entries by magnitude with ties broken by
// token and then dimension, the median (numpy's, the two middle values averaged), an all-equal
// stream, Sun et al.'s criterion, the layer where the largest arise, the first-token share and
// the zeroing edit; a one-token stream, a value that is not finite and a count below 1 refused.
#include "analysis/attention_sinks.h"
#include "analysis/head_roles.h"
#include "analysis/massive_activations.h"

#include <QTest>
#include <cmath>
#include <limits>
#include <stdexcept>

using namespace headlight;

namespace {

QString selectionRefusal(const Tensor& stream, int count) {
    try {
        analysis::largestActivations(stream, count);
    } catch (const std::invalid_argument& error) {
        return QString::fromUtf8(error.what());
    }
    return {};
}

analysis::LargestActivations peakOf(float value) {
    return {{{0, 0, value}}, 1.0};
}
} // namespace

class TestMassiveActivations : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void largestComeFirstTiesByTokenThenDimension() {
        // |−3| at (0, 1) ties 3 at (1, 0) and (1, 2): the earlier token, then the lower dimension.
        const Tensor stream({2, 3}, {1.0f, -3.0f, 0.5f, 3.0f, 2.0f, 3.0f});
        const auto largest = analysis::largestActivations(stream, 4);
        const std::vector<analysis::Activation> expected{
            {0, 1, -3.0f}, {1, 0, 3.0f}, {1, 2, 3.0f}, {1, 1, 2.0f}};
        QCOMPARE(largest.top, expected);
        QCOMPARE(largest.median, 2.5); // |x| sorted 0.5 1 2 3 3 3: (2 + 3) / 2
        QCOMPARE(largest.ratio(), 3.0 / 2.5);
    }

    void allEqualKeepsTheFirstEntriesWithRatioOne() {
        const Tensor stream({3, 2}, 2.0f);
        const auto largest = analysis::largestActivations(stream, 3);
        const std::vector<analysis::Activation> expected{{0, 0, 2.0f}, {0, 1, 2.0f}, {1, 0, 2.0f}};
        QCOMPARE(largest.top, expected);
        QCOMPARE(largest.median, 2.0);
        QCOMPARE(largest.ratio(), 1.0);
        QVERIFY(!largest.isMassive(largest.top.front()));
    }

    void aCountPastTheStreamKeepsEveryEntry() {
        const Tensor stream({2, 1}, {4.0f, -1.0f});
        const auto largest = analysis::largestActivations(stream, 10);
        QCOMPARE(largest.top.size(), std::size_t(2));
        QCOMPARE(largest.median, 2.5);
    }

    void sunEtAlsCriterionNeedsBothMagnitudeAndRatio() {
        // 500 against a median of 0.25: above 100 and 2000 × the median.
        std::vector<float> values(8, 0.25f);
        values[5] = -500.0f;
        values[6] = 150.0f; // above 100 but only 600 × the median
        const auto largest = analysis::largestActivations(Tensor({2, 4}, values), 2);
        QCOMPARE(largest.median, 0.25);
        QVERIFY(largest.isMassive(largest.top[0]));
        QVERIFY(!largest.isMassive(largest.top[1]));
        QCOMPARE(largest.ratio(), 2000.0);
        // 99 against a tiny median is no massive activation either: |x| > 100 is required.
        const auto small = analysis::largestActivations(Tensor({2, 2}, {99.0f, 0, 0, 0}), 1);
        QVERIFY(!small.isMassive(small.top[0]));
        QVERIFY(std::isinf(small.ratio()));
    }

    void oneTokenNonFiniteAndNoCountAreRefused() {
        QVERIFY(selectionRefusal(Tensor({1, 4}, 1.0f), 2).contains("at least 2 tokens"));
        Tensor withNan({2, 3}, 1.0f);
        withNan.data()[4] = std::numeric_limits<float>::quiet_NaN();
        QCOMPARE(selectionRefusal(withNan, 2),
                 QStringLiteral("the residual stream holds a value that is not finite at token "
                                "1, dimension 1"));
        Tensor withInf({2, 3}, 1.0f);
        withInf.data()[0] = std::numeric_limits<float>::infinity();
        QVERIFY(selectionRefusal(withInf, 2).contains("token 0, dimension 0"));
        QVERIFY(selectionRefusal(Tensor({2, 3}, 1.0f), 0).contains("at least one"));
        QVERIFY(selectionRefusal(Tensor({2, 3, 1}, 1.0f), 1).contains("[T, D]"));
    }

    void theyAriseAtTheFirstLayerWithHalfThePeak() {
        QCOMPARE(analysis::layerWhereLargestArise(
                     {peakOf(1.0f), peakOf(-6.0f), peakOf(10.0f), peakOf(9.0f)}),
                 1);
        QCOMPARE(analysis::layerWhereLargestArise({peakOf(4.0f), peakOf(4.0f)}), 0);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, analysis::layerWhereLargestArise({}));
    }

    void firstTokenShareIsTheHeadRolesSinkScore() {
        // Two heads of one layer, T = 2: rows (1, 0), (0.25, 0.75) and (1, 0), (0, 0) (a row of
        // zeros counts 0, as the sink score of head roles does).
        const Tensor maps({1, 2, 2, 2}, {1, 0, 0.25f, 0.75f, 1, 0, 0, 0});
        const std::vector<double> shares = analysis::firstTokenShares(maps);
        QCOMPARE(shares, (std::vector<double>{0.625, 0.5}));
        analysis::HeadRoleAccumulator roles(1, 2);
        roles.add({3, 4}, maps);
        QCOMPARE(roles.scores()[0].sink, shares[0]);
    }

    void theZeroingEditClearsOnlyItsEntries() {
        const variants::ResidualEdit edit =
            analysis::zeroActivations({{0, 1, 5.0f}, {1, 0, -7.0f}}, 2, 2);
        QCOMPARE(edit.layer, 2);
        QCOMPARE(edit.width, int64_t(2));
        const Tensor out = edit.rows(Tensor({2, 2}, {1, 5, -7, 3}));
        QCOMPARE(std::vector<float>(out.values().begin(), out.values().end()),
                 (std::vector<float>{1, 0, 0, 3}));
    }
};

HEADLIGHT_TEST_APPLESS_MAIN(TestMassiveActivations)
#include "test_massive_activations.moc"
