// The trained zoo (resources/models; tools/train/train_zoo.py, docs/zoo.md) on each backend: every
// shipped model reproduces the float64 PyTorch results its training code wrote (attentions, last
// hidden state, logits, internals) within 1e-4 for each golden input, and `headlight inspect
// --backend B --json` runs on it with its golden text; on Vulkan with no validation error.
#include "backend_fixture.h"
#include "zoo_models.h"

#include <QSet>
#include <QTest>

using namespace headlight;

class TestZooModels : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

public:
    explicit TestZooModels(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void everyShippedModelHasGoldens() {
        const auto cases = test::zooModelCases();
        QVERIFY2(!cases.empty(), "resources/models/goldens.json lists no case");
        QSet<QString> covered;
        for (const auto& c : cases)
            covered.insert(c.model());
        const QStringList models = test::zooModelNames();
        QVERIFY(!models.isEmpty());
        for (const QString& model : models)
            QVERIFY2(covered.contains(model), qPrintable(model + " has no golden input"));
    }

    void forwardMatchesTraining_data() {
        QTest::addColumn<int>("index");
        const auto cases = test::zooModelCases();
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(qPrintable(cases[i].name())) << int(i);
    }

    void forwardMatchesTraining() {
        QFETCH(int, index);
        test::verifyZooModelCase(fixture_.backend(), test::zooModelCases()[std::size_t(index)]);
    }

    void inspectRuns_data() {
        QTest::addColumn<int>("index");
        const auto cases = test::zooModelCases();
        for (std::size_t i = 0; i < cases.size(); ++i)
            if (cases[i].json["prefix"].toString() == "input0.")
                QTest::newRow(qPrintable(cases[i].model())) << int(i);
    }

    void inspectRuns() {
        QFETCH(int, index);
        test::verifyZooModelInspect(test::zooModelCases()[std::size_t(index)], fixture_.cliName());
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestZooModels)
#include "test_zoo_models.moc"
