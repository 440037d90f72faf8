#pragma once
// Files the tests write and read back: whole-file helpers that end the test program when the disk
// refuses (a test that could not write its input would prove nothing), and a temporary directory
// that hands out fresh numbered names so that tests never see each other's files.

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QString>
#include <QTemporaryDir>
#include <QtGlobal>
#include <cstring>

namespace headlight::test {

inline void writeFile(const QString& path, const QByteArray& bytes) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(bytes) != bytes.size())
        qFatal("cannot write the test file %s", qPrintable(path));
}

inline QByteArray readFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) qFatal("cannot read the test file %s", qPrintable(path));
    return file.readAll();
}

// The 8-byte little-endian length prefix of a safetensors file (the machines we test on are
// little-endian, as safetensors assumes).
inline QByteArray littleEndian64(quint64 value) {
    QByteArray bytes(8, '\0');
    std::memcpy(bytes.data(), &value, 8);
    return bytes;
}

class ScratchDir {
public:
    bool isValid() const { return dir_.isValid(); }
    QString path() const { return dir_.path(); }
    QString filePath(const QString& name) const { return dir_.filePath(name); }

    // A name not used before in this directory (nothing is created).
    QString freshPath(const QString& suffix = ".safetensors") {
        return dir_.filePath(QString("t%1%2").arg(++count_).arg(suffix));
    }
    // A new empty folder.
    QString freshFolder() {
        const QString folder = freshPath(QString());
        if (!QDir().mkpath(folder)) qFatal("cannot create %s", qPrintable(folder));
        return folder;
    }
    // A new file holding `bytes`.
    QString writeFresh(const QByteArray& bytes) {
        const QString path = freshPath();
        writeFile(path, bytes);
        return path;
    }

private:
    QTemporaryDir dir_;
    int count_ = 0;
};
} // namespace headlight::test
