#include "about_info.h"

#include "backend/vulkan/context.h"
#include "build_info.h"
#include "default_model.h"

namespace headlight::app {
namespace {

QString vulkanVersion(uint32_t api) {
    return QStringLiteral("%1.%2.%3")
        .arg(VK_API_VERSION_MAJOR(api))
        .arg(VK_API_VERSION_MINOR(api))
        .arg(VK_API_VERSION_PATCH(api));
}

// The backend choice's reason names the backend ("CPU backend: …" or "Vulkan backend: …").
QString computeLine(const BackendChoice& choice) {
    const QString reason = QString::fromStdString(choice.reason);
    if (!choice.device) return QStringLiteral("Compute: %1; Vulkan device: none").arg(reason);
    const vk::DeviceInfo& device = *choice.device;
    return QStringLiteral("Compute: %1; Vulkan device: %2, driver %3, Vulkan %4")
        .arg(reason, QString::fromStdString(device.name),
             QString::fromStdString(device.driverVersion), vulkanVersion(device.apiVersion));
}
} // namespace

QStringList aboutLines(const BackendChoice& choice) {
    const std::optional<QString> resources = resourcesFolder();
    return {
        QStringLiteral("Headlight %1").arg(headlightVersion()),
        QStringLiteral("Git revision: %1").arg(buildRevision()),
        QStringLiteral("Qt: %1 (built with %2)")
            .arg(QLatin1String(qVersion()), QLatin1String(QT_VERSION_STR)),
        computeLine(choice),
        QStringLiteral("Resources: %1")
            .arg(resources ? *resources : QStringLiteral("not found (set HEADLIGHT_RESOURCES)"))};
}
} // namespace headlight::app
