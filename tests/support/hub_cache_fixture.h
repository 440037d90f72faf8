#pragma once
// A Hugging Face hub cache built the way huggingface_hub lays one out, from the test checkpoints:
//
//   <root>/models--ORG--NAME/blobs/<sha256 of the bytes>
//   <root>/models--ORG--NAME/refs/main                       the revision, no newline
//   <root>/models--ORG--NAME/refs/<branch>                   others fetched by name (addRef)
//   <root>/models--ORG--NAME/snapshots/<revision>/<file>     → ../../blobs/<sha256> (relative)
//
// Real relative symlinks, so that the code under test follows them as it would in a real cache.

#include "temp_files.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QString>
#include <filesystem>

namespace headlight::test {

inline const QString kRevision = QStringLiteral("8c1a1b2c3d4e5f60718293a4b5c6d7e8f9012345");

class FakeHubCache {
public:
    explicit FakeHubCache(QString root)
        : root_(std::move(root)) {
        QDir().mkpath(root_);
    }

    const QString& root() const { return root_; }
    QString repoFolder(const QString& repoId) const {
        return root_ + "/models--" + QString(repoId).replace('/', "--");
    }
    QString snapshot(const QString& repoId, const QString& revision = kRevision) const {
        return repoFolder(repoId) + "/snapshots/" + revision;
    }
    QString blobOf(const QString& repoId, const QString& file,
                   const QString& revision = kRevision) const {
        return QFileInfo(snapshot(repoId, revision) + "/" + file).canonicalFilePath();
    }

    // Every file of `source` (not its folders) as snapshot `revision` of `repoId`; refs/main
    // names the revision when `isMain`. Returns the snapshot folder.
    QString addModel(const QString& repoId, const QString& source,
                     const QString& revision = kRevision, bool isMain = true) const {
        const QString repo = repoFolder(repoId);
        const QString snapshotFolder = snapshot(repoId, revision);
        QDir().mkpath(repo + "/blobs");
        QDir().mkpath(repo + "/refs");
        QDir().mkpath(snapshotFolder);
        for (const QFileInfo& file : QDir(source).entryInfoList(QDir::Files, QDir::Name)) {
            const QByteArray bytes = readFile(file.filePath());
            const QString blob =
                QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex();
            writeFile(repo + "/blobs/" + blob, bytes);
            link("../../blobs/" + blob, snapshotFolder + "/" + file.fileName());
        }
        if (isMain) writeFile(repo + "/refs/main", revision.toUtf8());
        return snapshotFolder;
    }

    // refs/<name> naming `revision` (no newline), as huggingface_hub writes a branch or tag it
    // fetched by name; `name` may hold '/' (refs/pr/1).
    void addRef(const QString& repoId, const QString& name, const QString& revision) const {
        const QString ref = repoFolder(repoId) + "/refs/" + name;
        QDir().mkpath(QFileInfo(ref).absolutePath());
        writeFile(ref, revision.toUtf8());
    }

    // Every file of `source` in `subfolder` (one or more levels) of snapshot `revision`, as a
    // release of several SAEs keeps each one; refs/main names the revision.
    QString addSubfolder(const QString& repoId, const QString& source, const QString& subfolder,
                         const QString& revision = kRevision) const {
        const QString repo = repoFolder(repoId);
        const QString folder = snapshot(repoId, revision) + "/" + subfolder;
        QDir().mkpath(repo + "/blobs");
        QDir().mkpath(repo + "/refs");
        QDir().mkpath(folder);
        const QString up = QStringLiteral("../").repeated(int(subfolder.count('/')) + 3);
        for (const QFileInfo& file : QDir(source).entryInfoList(QDir::Files, QDir::Name)) {
            const QByteArray bytes = readFile(file.filePath());
            const QString blob =
                QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex();
            writeFile(repo + "/blobs/" + blob, bytes);
            link(up + "blobs/" + blob, folder + "/" + file.fileName());
        }
        writeFile(repo + "/refs/main", revision.toUtf8());
        return folder;
    }

    // A symlink at `linkPath` whose target is `target` exactly as written.
    static void link(const QString& target, const QString& linkPath) {
        std::error_code error;
        std::filesystem::create_symlink(target.toStdString(), linkPath.toStdString(), error);
        if (error) qFatal("cannot link %s: %s", qPrintable(linkPath), error.message().c_str());
    }

private:
    QString root_;
};
} // namespace headlight::test
