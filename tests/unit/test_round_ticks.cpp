// Axis and colour-bar ticks fall on round values: a step of 1, 2, 2.5 or 5 times a power of ten,
// every multiple of it inside the range, printed without float noise (0.3, not
// 0.30000000000000004). A colour bar from 0 to 0.967 used to read 0, 0.242, 0.483, 0.725, 0.967.
#include "figures/figure_style.h"

#include <QTest>

using namespace headlight;

namespace {
QString joined(const std::vector<double>& ticks) {
    QStringList texts;
    for (const double t : ticks)
        texts << QString::number(t, 'g', 3);
    return texts.join(' ');
}
} // namespace

class TestRoundTicks : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void stepsAreOneTwoTwoAndAHalfOrFiveTimesAPowerOfTen() {
        QCOMPARE(render::roundTickStep(1.0, 4), 0.25);
        QCOMPARE(render::roundTickStep(0.967, 4), 0.25);
        QCOMPARE(render::roundTickStep(0.7, 4), 0.2);
        QCOMPARE(render::roundTickStep(3.0, 5), 1.0);
        QCOMPARE(render::roundTickStep(40.0, 4), 10.0);
        QCOMPARE(render::roundTickStep(0.0246, 4), 0.01);
        QCOMPARE(render::roundTickStep(0.0, 4), 1.0); // an empty span still gives a step
    }

    void ticksAreTheMultiplesInsideTheRange() {
        QCOMPARE(joined(render::roundTicks(0.0, 0.967, 4)), QStringLiteral("0 0.25 0.5 0.75"));
        QCOMPARE(joined(render::roundTicks(0.0, 1.0, 4)), QStringLiteral("0 0.25 0.5 0.75 1"));
        QCOMPARE(joined(render::roundTicks(0.0, 0.7, 4)), QStringLiteral("0 0.2 0.4 0.6"));
        QCOMPARE(joined(render::roundTicks(-0.0123, 0.0123, 4)), QStringLiteral("-0.01 0 0.01"));
        QCOMPARE(joined(render::roundTicks(1.5, 4.5, 5)), QStringLiteral("2 3 4"));
        QCOMPARE(joined(render::roundTicks(0.1, 0.7, 6)),
                 QStringLiteral("0.1 0.2 0.3 0.4 0.5 0.6 0.7"));
        QCOMPARE(joined(render::roundTicks(2.0, 2.0, 4)), QStringLiteral("2"));
    }

    void everyTickIsExactlyAMultipleOfTheStep() {
        const std::vector<double> ticks = render::roundTicks(0.1, 0.7, 6);
        QCOMPARE(ticks[2], 3 * 0.1); // k · step, never 0.1 + 0.1 + 0.1 summed
        QCOMPARE(QString::number(ticks[2], 'g', 17), QString::number(3 * 0.1, 'g', 17));
        for (const double t : render::roundTicks(-1e-3, 1e-3, 4))
            QVERIFY(!std::signbit(t) || t < 0.0); // no "-0"
    }
};

HEADLIGHT_TEST_APPLESS_MAIN(TestRoundTicks)
#include "test_round_ticks.moc"
