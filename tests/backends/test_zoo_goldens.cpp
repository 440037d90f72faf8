// The zoo checkpoint format (docs/zoo-format.md, model_type "headlight") on each backend against
// the float64 PyTorch model of tools/zoo/model.py (tests/data/zoo, written by
// tools/zoo/make_zoo_goldens.py): every position, norm, residual, order, FFN activation, MoE
// routing, ACT and reversible option, and the attention options that train (priors, masks,
// adaptive span, talking heads). Attentions, the last hidden state, the model's own logits (the
// engine's output head, tied to the embedding) and the format's internals, within 1e-4; on
// Vulkan with no validation error.
#include "backend_fixture.h"
#include "zoo_golden.h"

#include <QTest>

using namespace headlight;

class TestZooGoldens : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

public:
    explicit TestZooGoldens(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void forwardMatchesPyTorch_data() {
        QTest::addColumn<int>("index");
        const auto cases = test::zooGoldenCases();
        QVERIFY2(cases.size() >= 20, "expected the cases of tools/zoo/make_zoo_goldens.py");
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(qPrintable(cases[i].name())) << int(i);
    }

    void forwardMatchesPyTorch() {
        QFETCH(int, index);
        test::verifyZooCase(fixture_.backend(), test::zooGoldenCases()[std::size_t(index)]);
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestZooGoldens)
#include "test_zoo_goldens.moc"
