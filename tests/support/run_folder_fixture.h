#pragma once
// A zoo training run folder laid out as tools/train writes one (docs/scrubber.md): run.json
// listing each checkpoint's step, folder and held-out loss, and each step_NNNNNN/ a complete zoo
// model folder, here copied from the shipped zoo (resources/models).

#include "temp_files.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <utility>
#include <vector>

namespace headlight::test {

inline QString zooModel(const QString& name) {
    return QStringLiteral(HEADLIGHT_SOURCE_DIR "/resources/models/") + name;
}

// step_NNNNNN/ for each (step, zoo model name), run.json with held-out loss 5 − index.
inline QString makeRunFolder(const QString& run, const std::vector<std::pair<int, QString>>& steps,
                             const QString& text) {
    QJsonArray checkpoints;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const QString folder = QStringLiteral("step_%1").arg(steps[i].first, 6, 10, QChar('0'));
        QDir().mkpath(run + "/" + folder);
        for (const QFileInfo& file :
             QDir(zooModel(steps[i].second)).entryInfoList(QDir::Files, QDir::Name))
            writeFile(run + "/" + folder + "/" + file.fileName(), readFile(file.filePath()));
        checkpoints.append(
            QJsonObject{{"step", steps[i].first}, {"folder", folder}, {"loss", 5.0 - double(i)}});
    }
    const QJsonObject json{{"format", "headlight-run"},
                           {"name", QFileInfo(run).fileName()},
                           {"description", "a test run"},
                           {"text", text},
                           {"checkpoints", checkpoints}};
    writeFile(run + "/run.json", QJsonDocument(json).toJson());
    return run;
}
} // namespace headlight::test
