#pragma once
// Reading the tokenizer files: size-bounded reads, JSON parse errors reported with line and
// column, and typed field access whose failures name the file and the field.

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <optional>
#include <string>
#include <vector>

namespace headlight::tokenize {

// Larger than any real tokenizer file (the biggest tokenizer.json are ~35 MB).
constexpr qint64 kMaxFileBytes = 256LL << 20;

QByteArray readBoundedFile(const QString& path); // throws TokenizerError
// Lines as Python's text mode reads them (\n, \r\n or \r end a line), each checked to be UTF-8.
std::vector<std::string> readTextLines(const QString& path);
QJsonObject readJsonObject(const QString& path);                        // throws TokenizerError
std::optional<QJsonObject> readOptionalJsonObject(const QString& path); // nullopt when absent

// An object plus where it sits ("tokenizer.json: model"), for messages.
class JsonFields {
public:
    JsonFields(QJsonObject object, std::string where)
        : object_(std::move(object))
        , where_(std::move(where)) {}

    bool has(const char* key) const; // present and not null
    std::string string(const char* key) const;
    std::optional<std::string> optionalString(const char* key) const;
    bool boolean(const char* key, bool fallback) const;
    std::optional<bool> optionalBoolean(const char* key) const;
    int integer(const char* key, int fallback, int minimum, int maximum) const;
    QJsonObject object(const char* key) const;
    QJsonArray array(const char* key) const;
    JsonFields child(const char* key) const { return {object(key), where_ + ": " + key}; }
    const QJsonObject& raw() const { return object_; }
    const std::string& where() const { return where_; }
    [[noreturn]] void fail(const std::string& problem) const;

private:
    QJsonValue required(const char* key) const;

    QJsonObject object_;
    std::string where_;
};

// The text of a special-token entry, which tokenizer_config.json writes either as a string or as
// an AddedToken object with "content".
std::optional<std::string> tokenContent(const QJsonValue& value);
} // namespace headlight::tokenize
