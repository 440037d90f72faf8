// The backend policy: Vulkan on a real GPU, CPU when the only Vulkan device is a CPU or there is
// none, a forced choice honoured when it can be, and a reason for the status bar every time.
#include <QTest>

#include "backend/backend_choice.h"

using namespace headlight;

namespace {
vk::DeviceInfo device(uint32_t index, const char* name, vk::DeviceKind kind) {
    vk::DeviceInfo info;
    info.index = index;
    info.name = name;
    info.kind = kind;
    return info;
}
} // namespace

class TestBackendChoice : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void cpuDeviceOnlyMeansCpuBackend() {
        const auto choice = decideBackend(std::nullopt, {device(0, "llvmpipe", vk::DeviceKind::Cpu)}, "");
        QCOMPARE(choice.kind, BackendKind::Cpu);
        QVERIFY(choice.device.has_value());
        QCOMPARE(QString::fromStdString(choice.reason),
                 QString("CPU backend: the only Vulkan device is a CPU (llvmpipe), slower than Eigen on the same cores"));
    }

    void prefersDiscreteOverIntegratedOverCpu() {
        const std::vector<vk::DeviceInfo> devices{device(0, "llvmpipe", vk::DeviceKind::Cpu),
                                                  device(1, "Iris", vk::DeviceKind::Integrated),
                                                  device(2, "RTX", vk::DeviceKind::Discrete)};
        const auto choice = decideBackend(std::nullopt, devices, "");
        QCOMPARE(choice.kind, BackendKind::Vulkan);
        QCOMPARE(choice.device->name, std::string("RTX"));
        QCOMPARE(decideBackend(std::nullopt, devices, "", "iris").device->name, std::string("Iris"));
    }

    void forcedVulkanOnLavapipeIsHonoured() {
        const auto choice = decideBackend(BackendKind::Vulkan, {device(0, "llvmpipe", vk::DeviceKind::Cpu)}, "");
        QCOMPARE(choice.kind, BackendKind::Vulkan);
    }

    void noDeviceFallsBackWithReason() {
        const auto choice = decideBackend(BackendKind::Vulkan, {}, "no Vulkan driver is installed");
        QCOMPARE(choice.kind, BackendKind::Cpu);
        QCOMPARE(QString::fromStdString(choice.reason),
                 QString("Vulkan requested but no Vulkan device (no Vulkan driver is installed); using the CPU backend"));
    }

    void parsesBackendNames() {
        QCOMPARE(parseBackend("cpu"), std::optional(BackendKind::Cpu));
        QCOMPARE(parseBackend("vulkan"), std::optional(BackendKind::Vulkan));
        QCOMPARE(parseBackend("cuda"), std::nullopt);
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestBackendChoice)
#include "test_backend_choice.moc"
