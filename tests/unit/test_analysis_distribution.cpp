// Per-head distributions for violins: quartiles, Silverman's bandwidth and the Gaussian KDE
// against hand values and closed forms, and the per-head collection and ordering.
#include "analysis/distribution.h"

#include <QTest>
#include <cmath>

using namespace headlight;
using namespace headlight::analysis;

namespace {
bool near(double actual, double expected, double tolerance = 1e-6) {
    return std::abs(actual - expected) <= tolerance;
}

// [G] density on an evenly spaced grid -> its trapezoid-rule integral.
double trapezoid(const std::vector<float>& density, const std::vector<float>& grid) {
    double area = 0.0;
    for (std::size_t i = 1; i < grid.size(); ++i)
        area += 0.5 * (double(density[i]) + double(density[i - 1])) *
                (double(grid[i]) - double(grid[i - 1]));
    return area;
}
} // namespace

class TestAnalysisDistribution : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void quartilesOfAKnownList() {
        // 1..8 shuffled. Type 7: q1 at position 0.25 · 7 = 1.75 -> 2 + 0.75 · (3 - 2) = 2.75;
        // median at 3.5 -> 4.5; q3 at 5.25 -> 6.25 (NumPy's percentile gives the same).
        const std::vector<float> values{5, 3, 8, 1, 7, 2, 6, 4};
        const Summary summary = summarise(values);
        QCOMPARE(summary.count, std::size_t(8));
        QCOMPARE(summary.min, 1.0f);
        QCOMPARE(summary.q1, 2.75f);
        QCOMPARE(summary.median, 4.5f);
        QCOMPARE(summary.q3, 6.25f);
        QCOMPARE(summary.max, 8.0f);
        QCOMPARE(summary.mean, 4.5f);
    }

    void oddListMedianIsTheMiddleValue() {
        const std::vector<float> values{9, 1, 4};
        const Summary summary = summarise(values);
        QCOMPARE(summary.median, 4.0f);
        QCOMPARE(summary.q1, 2.5f); // position 0.5 between 1 and 4
        QCOMPARE(summary.q3, 6.5f); // position 1.5 between 4 and 9
    }

    void emptyListSummarisesToZeros() {
        const Summary summary = summarise({});
        QCOMPARE(summary.count, std::size_t(0));
        QCOMPARE(summary.median, 0.0f);
        QCOMPARE(summary.max, 0.0f);
    }

    void silvermanBandwidthWorkedByHand() {
        // 1..5: σ = √2.5 ≈ 1.5811; IQR = 4 - 2 = 2, / 1.34 ≈ 1.4925 is the smaller;
        // h = 0.9 · 1.4925 · 5^(-1/5) ≈ 0.973585 (R: bw.nrd0(1:5)).
        const std::vector<float> values{1, 2, 3, 4, 5};
        QVERIFY(near(silvermanBandwidth(values), 0.9 * (2.0 / 1.34) * std::pow(5.0, -0.2), 1e-9));
        QVERIFY(near(silvermanBandwidth(values), 0.973585, 1e-6));
    }

    void silvermanFallsBackForZeroSpread() {
        // IQR 0 but σ > 0: σ is used. All equal: |x| is used; all zero: 1.
        const std::vector<float> mostlyEqual{2, 2, 2, 2, 2, 2, 2, 10};
        const double sigma = std::sqrt(56.0 / 7.0); // mean 3, squares 7·1 + 49 = 56
        QVERIFY(near(silvermanBandwidth(mostlyEqual), 0.9 * sigma * std::pow(8.0, -0.2), 1e-9));
        QVERIFY(near(silvermanBandwidth(std::vector<float>{3, 3}), 0.9 * 3.0 * std::pow(2.0, -0.2),
                     1e-9));
        QVERIFY(
            near(silvermanBandwidth(std::vector<float>{0, 0}), 0.9 * std::pow(2.0, -0.2), 1e-9));
        QCOMPARE(silvermanBandwidth({}), 0.0);
    }

    void kdeOfOnePointIsTheNormalDensity() {
        // One value at 0, h = 1: the standard normal, 1/√(2π) ≈ 0.398942 at 0, e^(-½)/√(2π) at 1.
        const std::vector<float> values{0};
        const std::vector<float> grid{0, 1};
        const std::vector<float> density = gaussianKde(values, grid, 1.0);
        QVERIFY(near(density[0], 0.398942));
        QVERIFY(near(density[1], 0.398942 * std::exp(-0.5)));
    }

    void kdeIntegratesToOne() {
        const std::vector<float> values{0.1f, 0.2f, 0.25f, 0.4f, 0.9f, 1.3f, 1.35f};
        const std::vector<float> grid = linearGrid(-10.0f, 12.0f, 4001);
        QVERIFY(near(trapezoid(gaussianKde(values, grid), grid), 1.0, 1e-4));
    }

    void kdeOfNoValuesIsZeroAndBadBandwidthThrows() {
        const std::vector<float> grid{0, 1};
        QCOMPARE(gaussianKde({}, grid), (std::vector<float>{0, 0}));
        const std::vector<float> values{1};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, gaussianKde(values, grid, 0.0));
    }

    void linearGridHitsBothEnds() {
        QCOMPARE(linearGrid(0.0f, 1.0f, 5), (std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1}));
        QCOMPARE(linearGrid(2.0f, 3.0f, 1), (std::vector<float>{2}));
        QVERIFY(linearGrid(0.0f, 1.0f, 0).empty());
    }

    void collectsValidTokenValuesPerHead() {
        // [2, 2, 3], token 1 padded: each head keeps its tokens 0 and 2.
        const Tensor perToken({2, 2, 3}, {1, 99, 2, 3, 99, 4, 5, 99, 6, 7, 99, 8});
        const HeadValues values = collectHeadValues(perToken, {1, 0, 1});
        QCOMPARE(values.layers, int64_t(2));
        QCOMPARE(values.heads, int64_t(2));
        QCOMPARE(values.at(0, 1), (std::vector<float>{3, 4}));
        QCOMPARE(values.at(1, 0), (std::vector<float>{5, 6}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, collectHeadValues(perToken, {1, 1}));
    }

    void violinsCarrySummaryAndDensityPerHead() {
        const Tensor perToken({1, 2, 4}, {1, 2, 3, 4, 0.5f, 0.5f, 0.5f, 0.5f});
        const std::vector<float> grid = linearGrid(-5.0f, 10.0f, 31);
        const std::vector<Violin> violins =
            headViolins(collectHeadValues(perToken, allValid(4)), grid);
        QCOMPARE(violins.size(), std::size_t(2));
        QCOMPARE(violins[1].head, int64_t(1));
        QCOMPARE(violins[0].summary.median, 2.5f);
        QCOMPARE(violins[1].summary.median, 0.5f);
        QCOMPARE(violins[0].density.size(), grid.size());
    }

    void headsSortWithinEachLayerByMedian() {
        // Layer 0 medians by head: 0.5, 0.1, 0.3; layer 1: 0.2, 0.2, 0.0 (tie broken by head
        // index).
        const Tensor perToken({2, 3, 1}, {0.5f, 0.1f, 0.3f, 0.2f, 0.2f, 0.0f});
        const std::vector<float> grid{0};
        const std::vector<Violin> violins =
            headViolins(collectHeadValues(perToken, allValid(1)), grid);
        const auto ascending = headOrderByMedian(violins);
        QCOMPARE(ascending.size(), std::size_t(2));
        QCOMPARE(ascending[0], (std::vector<int64_t>{1, 2, 0}));
        QCOMPARE(ascending[1], (std::vector<int64_t>{2, 0, 1}));
        QCOMPARE(headOrderByMedian(violins, true)[0], (std::vector<int64_t>{0, 2, 1}));
        QCOMPARE(headOrderByMedian(violins, true)[1], (std::vector<int64_t>{0, 1, 2}));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestAnalysisDistribution)
#include "test_analysis_distribution.moc"
