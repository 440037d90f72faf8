// The loss and in-context-learning score the training scrubber draws
// (analysis/training_metrics.h), against values computed by hand: −ln softmax of small logit
// rows, Olsson et al.'s token 500 − token 50 and its scaling to shorter texts.
#include "analysis/training_metrics.h"
#include "error_of.h"

#include <QTest>
#include <cmath>

using namespace headlight;

class TestTrainingMetrics : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void tokenLossesAreNextTokenCrossEntropy() {
        // Row t − 1 predicts token t. Row 0: uniform over 3 → ln 3. Row 1: logits (ln 2, 0, 0)
        // give p = (1/2, 1/4, 1/4); token 2 is id 0 → ln 2. Row 2 predicts nothing.
        Tensor logits({3, 3}, {0.f, 0.f, 0.f, float(std::log(2.0)), 0.f, 0.f, 9.f, 9.f, 9.f});
        const std::vector<double> losses = analysis::tokenLosses(logits, {2, 1, 0});
        QCOMPARE(losses.size(), std::size_t(2));
        QVERIFY(std::abs(losses[0] - std::log(3.0)) < 1e-6);
        QVERIFY(std::abs(losses[1] - std::log(2.0)) < 1e-6);
        QVERIFY(std::abs(analysis::meanLoss(losses) - (std::log(3.0) + std::log(2.0)) / 2) < 1e-6);
        QVERIFY(std::isnan(analysis::meanLoss({})));
        // Large logits do not overflow: (1000, 0) puts p ≈ 1 on id 0.
        Tensor large({2, 2}, {1000.f, 0.f, 0.f, 0.f});
        QVERIFY(std::abs(analysis::tokenLosses(large, {1, 0})[0]) < 1e-9);
        QVERIFY(std::abs(analysis::tokenLosses(large, {1, 1})[0] - 1000.0) < 1e-3);
    }

    void tokenLossesRefuseMismatches() {
        Tensor logits({2, 3}, std::vector<float>(6, 0.f));
        QCOMPARE(test::errorOf<std::invalid_argument>([&] {
                     analysis::tokenLosses(logits, {0, 1, 2});
                 }),
                 QString("the logits are not [3, vocabulary]"));
        QCOMPARE(test::errorOf<std::invalid_argument>([&] {
                     analysis::tokenLosses(logits, {0, 3});
                 }),
                 QString("token id 3 is outside the vocabulary of 3"));
    }

    void iclPositionsScaleOlssonsRule() {
        const auto positions = [](int tokens) {
            const analysis::IclPositions p = analysis::iclPositions(tokens);
            return std::pair(p.early, p.late);
        };
        QCOMPARE(positions(1024), std::pair(50, 500)); // Olsson et al.'s own
        QCOMPARE(positions(501), std::pair(50, 500));
        QCOMPARE(positions(101), std::pair(10, 100));
        QCOMPARE(positions(16), std::pair(2, 15)); // round(1.5) = 2
        QCOMPARE(positions(3), std::pair(1, 2));
        QCOMPARE(test::errorOf<std::invalid_argument>([] { analysis::iclPositions(2); }),
                 QString("the in-context-learning score needs a text of 3 tokens or more, not 2"));
    }

    void iclScoreIsLateMinusEarly() {
        // Losses of tokens 1..10; 11 tokens → late 10, early 1.
        std::vector<double> losses{4.0, 3.5, 3.0, 2.9, 2.8, 2.7, 2.6, 2.5, 2.4, 1.5};
        const analysis::IclPositions p = analysis::iclPositions(11);
        QCOMPARE(p.late, 10);
        QCOMPARE(p.early, 1);
        QCOMPARE(analysis::iclScore(losses, p), 1.5 - 4.0);
    }
};

HEADLIGHT_TEST_APPLESS_MAIN(TestTrainingMetrics)
#include "test_training_metrics.moc"
