// The trained zoo (resources/models; tools/train/train_zoo.py, docs/zoo.md) on the Vulkan
// backend (lavapipe in CI): every golden input of every shipped model within 1e-4 of the float64
// PyTorch results, no validation error, and `headlight inspect --backend vulkan --json` runs on
// each model. The CPU side is tests/unit/test_zoo_models.cpp.
#include "backend/backend.h"
#include "vulkan_fixture.h"
#include "zoo_models.h"

#include <QTest>

using namespace headlight;

class TestVulkanZooModels : public QObject {
    Q_OBJECT
    std::shared_ptr<vk::Context> context_;
    std::unique_ptr<Backend> vulkan_;

private Q_SLOTS:
    void initTestCase() {
        context_ = test::makeContext();
        vulkan_ = makeVulkanBackend(context_);
    }
    void cleanupTestCase() {
        vulkan_.reset();
        test::verifyNoValidationErrors(*context_);
    }

    void forwardMatchesTraining_data() {
        QTest::addColumn<int>("index");
        const auto cases = test::zooModelCases();
        QVERIFY2(!cases.empty(), "resources/models/goldens.json lists no case");
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(qPrintable(cases[i].name())) << int(i);
    }

    void forwardMatchesTraining() {
        QFETCH(int, index);
        test::verifyZooModelCase(*vulkan_, test::zooModelCases()[std::size_t(index)]);
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
        test::verifyZooModelInspect(test::zooModelCases()[std::size_t(index)], "vulkan");
    }
};

QTEST_GUILESS_MAIN(TestVulkanZooModels)
#include "test_vulkan_zoo_models.moc"
