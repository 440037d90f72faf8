// The zoo-format goldens of tests/data/zoo (tools/zoo/make_zoo_goldens.py, float64 PyTorch) on
// the Vulkan backend (lavapipe in CI): attentions, the last hidden state, logits and the format's
// internals of every case within 1e-4, with no validation error. The CPU side of the same cases
// is tests/unit/test_zoo_goldens.cpp.
#include "backend/backend.h"
#include "vulkan_fixture.h"
#include "zoo_golden.h"

#include <QTest>

using namespace headlight;

class TestVulkanZooGoldens : public QObject {
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

    void forwardMatchesPyTorch_data() {
        QTest::addColumn<int>("index");
        const auto cases = test::zooGoldenCases();
        QVERIFY2(cases.size() >= 20, "expected the cases of tools/zoo/make_zoo_goldens.py");
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(qPrintable(cases[i].name())) << int(i);
    }

    void forwardMatchesPyTorch() {
        QFETCH(int, index);
        test::verifyZooCase(*vulkan_, test::zooGoldenCases()[std::size_t(index)]);
    }
};

QTEST_GUILESS_MAIN(TestVulkanZooGoldens)
#include "test_vulkan_zoo_goldens.moc"
