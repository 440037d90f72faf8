#include "default_model.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

namespace headlight::app {

std::optional<QString> resourcesFolder() {
    QStringList candidates;
    if (qEnvironmentVariableIsSet("HEADLIGHT_RESOURCES")) candidates << qEnvironmentVariable("HEADLIGHT_RESOURCES");
    const QString binary = QCoreApplication::applicationDirPath();
    // An install (FHS: bin/ beside share/headlight), then a build tree, then the source tree.
    candidates << binary + "/../share/headlight" << binary + "/../resources"
               << binary + "/../../resources" << QStringLiteral(HEADLIGHT_RESOURCE_DIR);
    for (const QString& candidate : candidates)
        if (QDir(candidate + "/models").exists()) return QDir(candidate).absolutePath();
    return std::nullopt;
}

std::optional<DefaultModel> defaultModel() {
    const std::optional<QString> resources = resourcesFolder();
    if (!resources) return std::nullopt;
    QFile file(*resources + "/models/default.json");
    if (!file.open(QIODevice::ReadOnly)) return std::nullopt;
    const QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
    const QString folder = *resources + "/models/" + json.value("model").toString();
    if (json.value("model").toString().isEmpty() || !QDir(folder).exists()) return std::nullopt;
    return DefaultModel{QDir(folder).absolutePath(), json.value("text").toString()};
}
} // namespace headlight::app
