// The X-former variant goldens of tests/data/variants (tools/golden/make_variant_goldens.py,
// float64 PyTorch) on the Vulkan backend (lavapipe in CI): attentions, the last hidden state and
// the reported internals of every case within 1e-4, with no validation error. The CPU side of the
// same cases is tests/unit/test_variant_goldens.cpp.
#include "backend/backend.h"
#include "variant_golden.h"
#include "vulkan_fixture.h"

#include <QTest>

using namespace headlight;

class TestVulkanVariantGoldens : public QObject {
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
        const auto cases = test::variantGoldenCases();
        QVERIFY2(cases.size() >= 25, "expected the cases of tools/golden/make_variant_goldens.py");
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(qPrintable(cases[i].name())) << int(i);
    }

    void forwardMatchesPyTorch() {
        QFETCH(int, index);
        test::verifyVariantCase(*vulkan_, test::variantGoldenCases()[std::size_t(index)]);
    }
};

QTEST_GUILESS_MAIN(TestVulkanVariantGoldens)
#include "test_vulkan_variant_goldens.moc"
