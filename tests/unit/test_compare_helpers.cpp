// The comparison family every test compares numbers with (support/compare.h): a NaN or an
// infinity on either side, at the first, a middle or the last element, an all-NaN output, a size
// or shape mismatch and an empty comparison all fail with the offending index named; what is
// honestly close passes with its largest difference. Why test the helpers: a comparison that
// forgets a NaN makes every test built on it pass on a broken engine.
#include "compare.h"

#include <QTest>
#include <cmath>
#include <limits>

using namespace headlight;

namespace {
constexpr float kHelperNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kHelperInf = std::numeric_limits<float>::infinity();

const std::vector<float> kHelperValues{0.5f, -1.0f, 2.0f, 0.25f, 3.0f};
} // namespace

class TestCompareHelpers : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void closeValuesGiveTheirLargestDifference() {
        std::vector<float> other = kHelperValues;
        other[3] += 0.125f;
        QString where;
        QCOMPARE(test::maxAbsDiff(other, kHelperValues, &where), 0.125);
        QVERIFY2(where.startsWith("index 3:"), qPrintable(where));
        QCOMPARE(test::maxAbsDiff(kHelperValues, kHelperValues), 0.0);
        const Tensor a({5}, kHelperValues), b({5}, other);
        QCOMPARE(test::maxAbsDiff(a, b), 0.125);
        QCOMPARE(test::scaledMaxAbsDiff(a, b), 0.125 / 3.0); // largest |b| is 3
        QVERIFY(test::differsBy(a, b, 0.1));
        QVERIFY(!test::differsBy(a, b, 0.125));
    }

    // A NaN or an infinity on either side, at the first, a middle or the last element.
    void nonFiniteFailsAtItsIndex_data() {
        QTest::addColumn<int>("index");
        QTest::addColumn<float>("value");
        QTest::addColumn<bool>("onReference");
        for (const int index : {0, 2, 4})
            for (const bool onReference : {false, true}) {
                const QString side = onReference ? "reference" : "result";
                QTest::newRow(qPrintable(QString("NaN at %1 of the %2").arg(index).arg(side)))
                    << index << kHelperNan << onReference;
                QTest::newRow(qPrintable(QString("+inf at %1 of the %2").arg(index).arg(side)))
                    << index << kHelperInf << onReference;
                QTest::newRow(qPrintable(QString("-inf at %1 of the %2").arg(index).arg(side)))
                    << index << -kHelperInf << onReference;
            }
    }
    void nonFiniteFailsAtItsIndex() {
        QFETCH(int, index);
        QFETCH(float, value);
        QFETCH(bool, onReference);
        std::vector<float> broken = kHelperValues;
        broken[std::size_t(index)] = value;
        const std::vector<float>& a = onReference ? kHelperValues : broken;
        const std::vector<float>& b = onReference ? broken : kHelperValues;
        const QString expected = QString("not finite at index %1:").arg(index);
        QString where;
        QCOMPARE(test::maxAbsDiff(a, b, &where), test::kNotComparable);
        QVERIFY2(where.startsWith(expected), qPrintable(where));
        const Tensor ta({5}, a), tb({5}, b);
        QCOMPARE(test::maxAbsDiff(ta, tb, &where), test::kNotComparable);
        QVERIFY2(where.startsWith(expected), qPrintable(where));
        QCOMPARE(test::scaledMaxAbsDiff(ta, tb), test::kNotComparable);
        QVERIFY(!test::differsBy(ta, tb, 0.0));
        QCOMPARE(test::maxAbsDiffSameNan(a, b), test::kNotComparable);
        QCOMPARE(test::worstError(a.size(), [&](std::size_t i) { return a[i] - b[i]; }),
                 test::kNotComparable);
        QVERIFY(!test::allFinite(broken, &where));
        QVERIFY2(where.startsWith(expected), qPrintable(where));
    }

    void allNanFailsAtTheFirstElement() {
        const std::vector<float> nan(5, kHelperNan);
        QString where;
        QCOMPARE(test::maxAbsDiff(nan, kHelperValues, &where), test::kNotComparable);
        QVERIFY2(where.startsWith("not finite at index 0:"), qPrintable(where));
        QCOMPARE(test::maxAbsDiff(nan, nan, &where), test::kNotComparable);
        QCOMPARE(test::maxAbsDiff(kHelperValues, nan, &where), test::kNotComparable);
        // NaN on both sides is skipped only by the same-NaN variant, and nothing is then left.
        QCOMPARE(test::maxAbsDiffSameNan(nan, nan, &where), test::kNotComparable);
        QVERIFY2(where.startsWith("nothing compared"), qPrintable(where));
    }

    void emptyFails() {
        const std::vector<float> none;
        QString where;
        QCOMPARE(test::maxAbsDiff(none, none, &where), test::kNotComparable);
        QVERIFY2(where.startsWith("nothing compared"), qPrintable(where));
        QCOMPARE(test::maxAbsDiff(Tensor(), Tensor()), test::kNotComparable);
        QCOMPARE(test::maxAbsDiff(Tensor({0, 3}), Tensor({0, 3})), test::kNotComparable);
        QVERIFY(!test::differsBy(Tensor(), Tensor(), -1.0));
        QCOMPARE(test::worstError(0, [](std::size_t) { return 0.0; }), test::kNotComparable);
        QVERIFY(!test::allFinite(none));
        QVERIFY(test::allFinite(kHelperValues));
        // Excluding every element is as empty as having none.
        QCOMPARE(test::maxAbsDiff(
                     kHelperValues, kHelperValues, [](std::size_t) { return false; }, &where),
                 test::kNotComparable);
        QVERIFY2(where.startsWith("nothing compared"), qPrintable(where));
    }

    void sizeOrShapeMismatchFails() {
        const std::vector<float> shorter(kHelperValues.begin(), kHelperValues.end() - 1);
        QString where;
        QCOMPARE(test::maxAbsDiff(shorter, kHelperValues, &where), test::kNotComparable);
        QCOMPARE(where, QString("sizes 4 vs 5"));
        QCOMPARE(test::maxAbsDiff(Tensor({2, 3}), Tensor({3, 2}), &where), test::kNotComparable);
        QCOMPARE(where, QString("shape [2, 3] vs [3, 2]"));
        QCOMPARE(test::maxAbsDiffSameNan(shorter, kHelperValues), test::kNotComparable);
    }

    // An excluded element is not looked at, NaN or not; the included ones still are.
    void includeSkipsOnlyExcludedElements() {
        std::vector<float> broken = kHelperValues;
        broken[1] = kHelperNan;
        broken[4] += 0.5f;
        QCOMPARE(test::maxAbsDiff(broken, kHelperValues, [](std::size_t i) { return i != 1; }),
                 0.5);
        QCOMPARE(test::maxAbsDiff(broken, kHelperValues, [](std::size_t i) { return i != 4; }),
                 test::kNotComparable);
    }

    // NaN in the same places on both sides (the query-key embedding's padding) is skipped; a NaN
    // on one side only fails wherever it is.
    void sameNanSkipsOnlyMatchingNan() {
        std::vector<float> a = kHelperValues, b = kHelperValues;
        a[0] = b[0] = kHelperNan;
        a[2] += 0.25f;
        QCOMPARE(test::maxAbsDiffSameNan(a, b), 0.25);
        for (const std::size_t i : {std::size_t(1), std::size_t(4)}) {
            std::vector<float> one = a;
            one[i] = kHelperNan;
            QString where;
            QCOMPARE(test::maxAbsDiffSameNan(one, b, &where), test::kNotComparable);
            QVERIFY2(where.contains(QString("index %1:").arg(i)), qPrintable(where));
            QCOMPARE(test::maxAbsDiffSameNan(b, one), test::kNotComparable);
        }
    }

    void worstErrorKeepsTheLargest() {
        QString where;
        QCOMPARE(test::worstError(
                     kHelperValues.size(), [](std::size_t i) { return std::abs(kHelperValues[i]); },
                     &where),
                 3.0);
        QVERIFY2(where.startsWith("index 4:"), qPrintable(where));
    }
};

HEADLIGHT_TEST_APPLESS_MAIN(TestCompareHelpers)
#include "test_compare_helpers.moc"
