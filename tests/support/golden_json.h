#pragma once
// The golden JSON files of tests/data, read whole (a test without its goldens proves nothing, so
// an unreadable file ends the program), and their lists of token ids as the engine and the CLI
// take them.

#include "temp_files.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>
#include <cstdint>
#include <vector>

namespace headlight::test {

inline QJsonDocument readJsonFile(const QString& path) {
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(readFile(path), &error);
    if (document.isNull())
        qFatal("%s is not JSON: %s", qPrintable(path), qPrintable(error.errorString()));
    return document;
}

inline QJsonObject readJsonObject(const QString& path) {
    return readJsonFile(path).object();
}

inline std::vector<int32_t> idsOf(const QJsonValue& list) {
    std::vector<int32_t> ids;
    for (const QJsonValue& id : list.toArray())
        ids.push_back(int32_t(id.toInt()));
    return ids;
}

// "5 9 5" or "5,9,5": ids as `--ids` and corpus lines spell them.
inline QString joinedIds(const QJsonValue& list, QChar separator) {
    QStringList parts;
    for (const QJsonValue& id : list.toArray())
        parts << QString::number(id.toInt());
    return parts.join(separator);
}
} // namespace headlight::test
