#include "file_hashes.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMutex>
#include <QRegularExpression>

namespace headlight::app {
namespace {

struct CachedHash {
    qint64 size = -1;
    QDateTime modified;
    QString sha256;
};

bool isWeightsFile(const QString& name) {
    static const QRegularExpression pattern(
        QStringLiteral(R"(^(model|pytorch_model)([-.].*)?\.(safetensors|bin)(\.index\.json)?$)"));
    return pattern.match(name).hasMatch();
}

bool isTokenizerFile(const QString& name) {
    static const QStringList others{"merges.txt", "special_tokens_map.json", "added_tokens.json",
                                    "spiece.model", "sentencepiece.bpe.model"};
    return name.startsWith(QLatin1String("tokenizer")) || name.startsWith(QLatin1String("vocab")) ||
           others.contains(name);
}

// The file read in blocks, so that a hash that is no longer wanted stops within one.
QByteArray sha256Of(QFile& file, const std::atomic<bool>* stop) {
    QCryptographicHash hash(QCryptographicHash::Sha256);
    QByteArray block(1 << 22, Qt::Uninitialized);
    for (;;) {
        if (stop && stop->load())
            throw FileHashError(
                QStringLiteral("hashing %1 was stopped").arg(file.fileName()).toStdString());
        const qint64 read = file.read(block.data(), block.size());
        if (read < 0)
            throw FileHashError(QStringLiteral("cannot hash %1: %2")
                                    .arg(file.fileName(), file.errorString())
                                    .toStdString());
        if (read == 0) return hash.result();
        hash.addData(QByteArrayView(block.constData(), read));
    }
}
} // namespace

QString fileSha256(const QString& path, const std::atomic<bool>* stop) {
    static QMutex mutex;
    static std::map<QString, CachedHash> cache;
    const QFileInfo info(path);
    const QString key = info.canonicalFilePath();
    {
        const QMutexLocker lock(&mutex);
        const auto found = cache.find(key);
        if (found != cache.end() && found->second.size == info.size() &&
            found->second.modified == info.lastModified())
            return found->second.sha256;
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw FileHashError(
            QStringLiteral("cannot hash %1: %2").arg(path, file.errorString()).toStdString());
    const QString sha = QString::fromLatin1(sha256Of(file, stop).toHex());
    const QMutexLocker lock(&mutex);
    cache[key] = {info.size(), info.lastModified(), sha};
    return sha;
}

ModelFiles hashModelFiles(const QString& folder, const std::atomic<bool>* stop) {
    ModelFiles files;
    const QFileInfoList entries = QDir(folder).entryInfoList(QDir::Files, QDir::Name);
    for (const QFileInfo& entry : entries) {
        const QString name = entry.fileName();
        if (isWeightsFile(name))
            files.weights[name] = fileSha256(entry.filePath(), stop);
        else if (isTokenizerFile(name))
            files.tokenizer[name] = fileSha256(entry.filePath(), stop);
        else if (name.endsWith(QLatin1String(".json")))
            files.config[name] = fileSha256(entry.filePath(), stop);
    }
    return files;
}

} // namespace headlight::app
