#include "feature_labels.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <algorithm>
#include <array>
#include <zlib.h>

namespace headlight::app {
namespace {

constexpr qint64 kLargestLabelsBytes = qint64(1) << 30;
constexpr int kLargestLabelledFeature = 1 << 24;

[[noreturn]] void refuseLabels(const QString& path, const QString& why) {
    throw FeatureLabelsError(
        QStringLiteral("%1: %2").arg(QFileInfo(path).fileName(), why).toStdString());
}

// Every gzip member of `compressed`, inflated (an export may concatenate them).
QByteArray gunzip(const QByteArray& compressed, const QString& path) {
    z_stream stream{};
    if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK)
        refuseLabels(path, QStringLiteral("zlib failed"));
    QByteArray out;
    std::array<char, 1 << 16> chunk{};
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
    stream.avail_in = uInt(compressed.size());
    int status = Z_OK;
    while (true) {
        stream.next_out = reinterpret_cast<Bytef*>(chunk.data());
        stream.avail_out = uInt(chunk.size());
        status = inflate(&stream, Z_NO_FLUSH);
        out.append(chunk.data(), qsizetype(chunk.size() - stream.avail_out));
        if (out.size() > kLargestLabelsBytes) break;
        if (status == Z_STREAM_END && stream.avail_in > 0) {
            inflateReset(&stream); // the next member
            continue;
        }
        if (status != Z_OK) break;
        if (stream.avail_in == 0 && stream.avail_out != 0) {
            status = Z_BUF_ERROR; // the input ended inside a member
            break;
        }
    }
    const QString message = QString::fromLatin1(stream.msg ? stream.msg : "zlib error");
    inflateEnd(&stream);
    if (out.size() > kLargestLabelsBytes)
        refuseLabels(path, QStringLiteral("it inflates past 1 GiB"));
    if (status == Z_BUF_ERROR) refuseLabels(path, QStringLiteral("the gzip stream is truncated"));
    if (status != Z_STREAM_END)
        refuseLabels(path, QStringLiteral("it is not gzip data (%1)").arg(message));
    return out;
}

QByteArray contentsOf(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) refuseLabels(path, file.errorString());
    if (file.size() > kLargestLabelsBytes)
        refuseLabels(path, QStringLiteral("it is larger than 1 GiB"));
    const QByteArray bytes = file.readAll();
    return path.endsWith(QLatin1String(".gz")) ? gunzip(bytes, path) : bytes;
}

// "index" as the export writes it (a string), or a number.
int featureOf(const QJsonValue& value, const QString& path, int line) {
    bool ok = value.isDouble();
    double number = value.toDouble();
    if (value.isString()) number = value.toString().toDouble(&ok);
    if (!ok || number < 0 || number >= kLargestLabelledFeature || number != double(int(number)))
        refuseLabels(path, QStringLiteral("line %1: \"index\" is not a feature number").arg(line));
    return int(number);
}

void readLines(const QString& path, FeatureLabels& labels) {
    const QByteArray text = contentsOf(path);
    int line = 0;
    for (const QByteArray& row : text.split('\n')) {
        ++line;
        if (row.trimmed().isEmpty()) continue;
        QJsonParseError error;
        const QJsonDocument document = QJsonDocument::fromJson(row, &error);
        const QJsonObject object = document.object();
        if (error.error != QJsonParseError::NoError || !document.isObject() ||
            !object.value("description").isString() || !object.contains("index"))
            refuseLabels(path, QStringLiteral("line %1 is not an explanation (a JSON object with "
                                              "\"index\" and \"description\")")
                                   .arg(line));
        const QString source = object.value("modelId").toString() + QLatin1Char('/') +
                               object.value("layer").toString();
        if (labels.source.isEmpty()) labels.source = source;
        if (source != labels.source)
            refuseLabels(
                path,
                QStringLiteral("line %1 explains %2, not %3").arg(line).arg(source, labels.source));
        labels.descriptions.try_emplace(featureOf(object.value("index"), path, line),
                                        object.value("description").toString().simplified());
        ++labels.explanations;
    }
}

// "batch-2" before "batch-10": the names with their first number compared as a number.
bool naturallyBefore(const QString& a, const QString& b) {
    static const QRegularExpression number(QStringLiteral("\\d+"));
    const QRegularExpressionMatch x = number.match(a), y = number.match(b);
    if (x.hasMatch() && y.hasMatch() && a.left(x.capturedStart()) == b.left(y.capturedStart()) &&
        x.captured().toULongLong() != y.captured().toULongLong())
        return x.captured().toULongLong() < y.captured().toULongLong();
    return a < b;
}

QStringList filesOf(const QString& path) {
    const QFileInfo info(path);
    if (!info.isDir()) return {path};
    QDir dir(path);
    if (dir.exists(QStringLiteral("explanations"))) dir.cd(QStringLiteral("explanations"));
    QStringList names =
        dir.entryList({QStringLiteral("*.jsonl.gz"), QStringLiteral("*.jsonl")}, QDir::Files);
    std::sort(names.begin(), names.end(), naturallyBefore);
    QStringList files;
    for (const QString& name : names)
        files << dir.filePath(name);
    if (files.isEmpty())
        throw FeatureLabelsError(
            QStringLiteral("%1 holds no .jsonl.gz explanations").arg(path).toStdString());
    return files;
}
} // namespace

QString FeatureLabels::of(int feature) const {
    const auto found = descriptions.find(feature);
    return found == descriptions.end() ? QString() : found->second;
}

FeatureLabels readFeatureLabels(const QString& path) {
    if (!QFileInfo::exists(path))
        throw FeatureLabelsError(QStringLiteral("%1 does not exist").arg(path).toStdString());
    FeatureLabels labels;
    labels.path = QFileInfo(path).absoluteFilePath();
    for (const QString& file : filesOf(path))
        readLines(file, labels);
    return labels;
}
} // namespace headlight::app
