// `headlight devices`: the Vulkan devices, their limits, and which backend Headlight would use.
// Its options: devicesCommand() at the end, which `headlight devices --help` prints.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

#include "backend/backend_choice.h"
#include "backend/vulkan/vk_error.h"
#include "cli.h"
#include "cli_args.h"

namespace headlight::app {
namespace {

QJsonObject toJson(const vk::DeviceInfo& d) {
    return QJsonObject{{"index", int(d.index)},
                       {"name", QString::fromStdString(d.name)},
                       {"kind", vk::deviceKindName(d.kind)},
                       {"driver", QString::fromStdString(d.driverVersion)},
                       {"max_storage_buffer_range", double(d.maxStorageBufferRange)},
                       {"max_compute_shared_memory", int(d.maxComputeSharedMemory)},
                       {"max_push_constants_size", int(d.maxPushConstantsSize)},
                       {"subgroup_size", int(d.subgroupSize)},
                       {"unified_memory", d.unifiedMemory}};
}

int runDevices(const CliArgs& parsed) {
    std::optional<BackendKind> forced;
    if (parsed.has("--backend")) forced = parsed.backend();
    std::vector<vk::DeviceInfo> devices;
    std::string error;
    try {
        devices = vk::listDevices();
    } catch (const vk::VulkanError& e) {
        error = e.what();
    }
    const BackendChoice choice = decideBackend(forced, devices, error, parsed.value("--vulkan-device").toStdString());
    QTextStream out(stdout);
    if (parsed.has("--json")) {
        QJsonArray list;
        for (const vk::DeviceInfo& d : devices) list.append(toJson(d));
        const QJsonObject root{{"devices", list},
                               {"backend", backendName(choice.kind)},
                               {"reason", QString::fromStdString(choice.reason)}};
        out << QJsonDocument(root).toJson(QJsonDocument::Indented);
        return 0;
    }
    for (const vk::DeviceInfo& d : devices) out << d.index << ": " << QString::fromStdString(d.summary()) << "\n";
    if (devices.empty()) out << "no Vulkan device: " << QString::fromStdString(error) << "\n";
    out << "backend: " << backendName(choice.kind) << " (" << QString::fromStdString(choice.reason) << ")\n";
    return 0;
}
} // namespace

CliCommand devicesCommand() {
    return {
        QStringLiteral("devices"),
        QStringLiteral("list Vulkan devices and the backend Headlight would choose"),
        {QStringLiteral("[--backend cpu|vulkan] [--vulkan-device SEL] [--json]")},
        {},
        {backendOption(),
         vulkanDeviceOption(),
         {"--json", {}, "print the devices, their limits and the choice as JSON"}},
        {QStringLiteral("headlight devices --json")},
        &runDevices,
    };
}
} // namespace headlight::app
