// The compute device layer on the real driver (lavapipe in CI): devices are found and described,
// the limits the engine relies on are recorded, selection can be overridden, and validation is on.
#include <QTest>

#include "backend/vulkan/context.h"
#include "backend/vulkan/vk_error.h"
#include "vulkan_fixture.h"

using namespace headlight;

class TestVulkanDevice : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void listsAtLeastOneDevice() {
        const auto devices = vk::listDevices();
        QVERIFY(!devices.empty());
        for (const auto& d : devices) {
            QVERIFY(!d.name.empty());
            QVERIFY(d.maxStorageBufferRange > 0);
            QVERIFY(d.subgroupSize > 0);
            QVERIFY(d.maxPushConstantsSize >= 128);
        }
    }

    void recordsLavapipeLimits() {
        auto context = test::makeContext();
        const vk::DeviceInfo& info = context->info();
        QVERIFY2(info.name.find("llvmpipe") != std::string::npos, info.name.c_str());
        QCOMPARE(info.kind, vk::DeviceKind::Cpu);
        QCOMPARE(info.maxStorageBufferRange, uint64_t(128) << 20);
        QCOMPARE(info.maxComputeSharedMemory, 32u * 1024u);
        QCOMPARE(info.subgroupSize, 8u);
        QVERIFY(info.unifiedMemory);
        QVERIFY(context->validationEnabled());
        QVERIFY(QString::fromStdString(info.summary()).contains("subgroup 8"));
        test::verifyNoValidationErrors(*context);
    }

    void selectsByIndexAndName() {
        const auto devices = vk::listDevices();
        QCOMPARE(vk::selectDevice(devices, "0"), std::optional<std::size_t>(0));
        QCOMPARE(vk::selectDevice(devices, "LLVMPIPE"), std::optional<std::size_t>(0));
        QCOMPARE(vk::selectDevice(devices, "no such gpu"), std::nullopt);
        vk::ContextOptions options;
        options.deviceSelector = "llvm";
        QVERIFY(vk::Context::create(options)->info().name.find("llvmpipe") != std::string::npos);
    }

    void unknownSelectorNamesTheDevices() {
        vk::ContextOptions options;
        options.deviceSelector = "quantum accelerator";
        try {
            vk::Context::create(options);
            QFAIL("expected VulkanError");
        } catch (const vk::VulkanError& error) {
            const QString message = error.what();
            QVERIFY2(message.contains("no Vulkan device matches 'quantum accelerator'"), error.what());
            QVERIFY2(message.contains("0: llvmpipe"), error.what());
        }
    }

    void environmentOverridesSelection() {
        qputenv("HEADLIGHT_VULKAN_DEVICE", "7");
        QVERIFY_THROWS_EXCEPTION(vk::VulkanError, vk::Context::create());
        qunsetenv("HEADLIGHT_VULKAN_DEVICE");
        QVERIFY(vk::Context::create() != nullptr);
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestVulkanDevice)
#include "test_vulkan_device.moc"
