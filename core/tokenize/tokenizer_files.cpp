#include "tokenizer_files.h"

#include "model.h"
#include "tokenizer.h"
#include "unicode_text.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonParseError>
#include <climits>
#include <cmath>

namespace headlight::tokenize {
namespace {

std::string lineAndColumn(const QByteArray& data, qsizetype offset) {
    const qsizetype end = std::min(offset, data.size());
    int line = 1;
    qsizetype lineStart = 0;
    for (qsizetype i = 0; i < end; ++i) {
        if (data[i] != '\n') continue;
        ++line;
        lineStart = i + 1;
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(end - lineStart + 1);
}
} // namespace

QByteArray readBoundedFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw TokenizerError(path.toStdString() + ": cannot read (" +
                             file.errorString().toStdString() + ")");
    if (file.size() > kMaxFileBytes)
        throw TokenizerError(path.toStdString() + ": larger than " +
                             std::to_string(kMaxFileBytes >> 20) +
                             " MiB, too large for a tokenizer file");
    return file.readAll();
}

std::vector<std::string> readTextLines(const QString& path) {
    const QByteArray data = readBoundedFile(path);
    std::vector<std::string> lines;
    for (qsizetype begin = 0; begin < data.size();) {
        qsizetype end = begin;
        while (end < data.size() && data[end] != '\n' && data[end] != '\r')
            ++end;
        std::string line(data.constData() + begin, static_cast<size_t>(end - begin));
        try {
            decodeUtf8(line);
        } catch (const TokenizerError&) {
            throw TokenizerError(path.toStdString() + " line " + std::to_string(lines.size() + 1) +
                                 ": not valid UTF-8");
        }
        if (lines.size() >= static_cast<size_t>(kMaxVocabEntries))
            throw TokenizerError(path.toStdString() + ": more than 10,000,000 lines");
        lines.push_back(std::move(line));
        const bool crlf = end + 1 < data.size() && data[end] == '\r' && data[end + 1] == '\n';
        begin = end + (crlf ? 2 : 1);
    }
    return lines;
}

QJsonObject readJsonObject(const QString& path) {
    const QByteArray data = readBoundedFile(path);
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(data, &error);
    if (error.error != QJsonParseError::NoError)
        throw TokenizerError(path.toStdString() + ": invalid JSON at " +
                             lineAndColumn(data, error.offset) + " (" +
                             error.errorString().toStdString() + ")");
    if (!document.isObject())
        throw TokenizerError(path.toStdString() + ": expected a JSON object at the top level");
    return document.object();
}

std::optional<QJsonObject> readOptionalJsonObject(const QString& path) {
    if (!QFile::exists(path)) return std::nullopt;
    return readJsonObject(path);
}

bool JsonFields::has(const char* key) const {
    const QJsonValue value = object_.value(QLatin1String(key));
    return !value.isUndefined() && !value.isNull();
}

QJsonValue JsonFields::required(const char* key) const {
    if (!has(key)) fail(std::string("missing field '") + key + "'");
    return object_.value(QLatin1String(key));
}

std::string JsonFields::string(const char* key) const {
    const QJsonValue value = required(key);
    if (!value.isString()) fail(std::string("field '") + key + "' must be a string");
    return value.toString().toStdString();
}

std::optional<std::string> JsonFields::optionalString(const char* key) const {
    if (!has(key)) return std::nullopt;
    return string(key);
}

bool JsonFields::boolean(const char* key, bool fallback) const {
    return optionalBoolean(key).value_or(fallback);
}

std::optional<bool> JsonFields::optionalBoolean(const char* key) const {
    if (!has(key)) return std::nullopt;
    const QJsonValue value = object_.value(QLatin1String(key));
    if (!value.isBool()) fail(std::string("field '") + key + "' must be true or false");
    return value.toBool();
}

int JsonFields::integer(const char* key, int fallback, int minimum, int maximum) const {
    if (!has(key)) return fallback;
    const QJsonValue value = object_.value(QLatin1String(key));
    const double number = value.toDouble(std::nan(""));
    if (!value.isDouble() || number != std::floor(number) || number < minimum || number > maximum)
        fail(std::string("field '") + key + "' must be an integer from " + std::to_string(minimum) +
             " to " + std::to_string(maximum));
    return static_cast<int>(number);
}

QJsonObject JsonFields::object(const char* key) const {
    const QJsonValue value = required(key);
    if (!value.isObject()) fail(std::string("field '") + key + "' must be an object");
    return value.toObject();
}

QJsonArray JsonFields::array(const char* key) const {
    const QJsonValue value = required(key);
    if (!value.isArray()) fail(std::string("field '") + key + "' must be an array");
    return value.toArray();
}

void JsonFields::fail(const std::string& problem) const {
    throw TokenizerError(where_ + ": " + problem);
}

std::optional<std::string> tokenContent(const QJsonValue& value) {
    if (value.isString()) return value.toString().toStdString();
    if (value.isObject() && value.toObject().value("content").isString())
        return value.toObject().value("content").toString().toStdString();
    return std::nullopt;
}
} // namespace headlight::tokenize
