#include "export/atomic_write.h"

#include <QDir>
#include <QFileInfo>
#include <QSaveFile>

namespace headlight::render {

void failExport(const QString& path, const QString& reason) {
    throw ExportError(QStringLiteral("cannot write %1: %2")
                          .arg(QDir::toNativeSeparators(path), reason)
                          .toStdString());
}

void writeAtomically(const QString& path, const std::function<void(QIODevice&)>& write) {
    const QFileInfo target(path);
    if (!target.dir().exists())
        failExport(path, QStringLiteral("the folder %1 does not exist")
                             .arg(QDir::toNativeSeparators(target.absolutePath())));
    // QSaveFile writes a temporary file beside `path` and renames it over `path` on commit();
    // destroyed uncommitted (a throw from `write`) or failing to commit, it removes that file.
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) failExport(path, file.errorString());
    write(file);
    if (file.error() != QFileDevice::NoError) failExport(path, file.errorString());
    if (!file.commit()) failExport(path, file.errorString());
}

void writeBytesAtomically(const QString& path, const QByteArray& bytes) {
    writeAtomically(path, [&](QIODevice& device) {
        if (device.write(bytes) != bytes.size()) failExport(path, device.errorString());
    });
}
} // namespace headlight::render
