// The zoo checkpoint format (docs/zoo-format.md, model_type "headlight") on the CPU backend
// against the float64 PyTorch model of tools/zoo/model.py (tests/data/zoo, written by
// tools/zoo/make_zoo_goldens.py): every position, norm, residual, order, FFN activation, MoE
// routing, ACT and reversible option, and the attention options that train (priors, masks,
// adaptive span, talking heads). Attentions, the last hidden state, logits through the tied head
// and the format's internals, within 1e-4.
#include "backend/backend.h"
#include "zoo_golden.h"

#include <QTest>

using namespace headlight;

class TestZooGoldens : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void forwardMatchesPyTorch_data() {
        QTest::addColumn<int>("index");
        const auto cases = test::zooGoldenCases();
        QVERIFY2(cases.size() >= 20, "expected the cases of tools/zoo/make_zoo_goldens.py");
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(qPrintable(cases[i].name())) << int(i);
    }

    void forwardMatchesPyTorch() {
        QFETCH(int, index);
        auto backend = makeCpuBackend();
        test::verifyZooCase(*backend, test::zooGoldenCases()[std::size_t(index)]);
    }
};

QTEST_GUILESS_MAIN(TestZooGoldens)
#include "test_zoo_goldens.moc"
