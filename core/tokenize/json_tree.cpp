#include "json_tree.h"

#include "tokenizer.h"
#include "unicode_text.h"

#include <QFile>
#include <QJsonArray>
#include <climits>
#include <cmath>

namespace headlight::tokenize {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// Read straight into simdjson's padded buffer: one copy of the file, freed once it is parsed.
simdjson::padded_string readPadded(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw TokenizerError(path.toStdString() + ": cannot read (" +
                             file.errorString().toStdString() + ")");
    if (file.size() > kMaxFileBytes)
        throw TokenizerError(path.toStdString() + ": larger than " +
                             std::to_string(kMaxFileBytes >> 20) +
                             " MiB, too large for a tokenizer file");
    simdjson::padded_string text(static_cast<size_t>(file.size()));
    if (file.read(text.data(), file.size()) != file.size())
        throw TokenizerError(path.toStdString() + ": cannot read (" +
                             file.errorString().toStdString() + ")");
    return text;
}

// Not QString::fromUtf8 nor fromUcs4: Qt 6.4's decoders drop a leading U+FEFF as if it were a
// byte-order mark, and Gemma 3 has tokens made of U+FEFF. Copying UTF-16 units decodes nothing.
QString qString(std::string_view text) {
    std::u16string units;
    units.reserve(text.size());
    for (const char32_t c : decodeUtf8(text)) {
        if (c < 0x10000) {
            units.push_back(static_cast<char16_t>(c));
            continue;
        }
        units.push_back(static_cast<char16_t>(0xD800 + ((c - 0x10000) >> 10)));
        units.push_back(static_cast<char16_t>(0xDC00 + ((c - 0x10000) & 0x3FF)));
    }
    return QString(reinterpret_cast<const QChar*>(units.data()),
                   static_cast<qsizetype>(units.size()));
}

QJsonValue toQJsonValue(element value) {
    switch (value.type()) {
    case element_type::ARRAY: {
        QJsonArray array;
        const simdjson::dom::array items = value.get_array().value_unsafe();
        for (element item : items)
            array.append(toQJsonValue(item));
        return array;
    }
    case element_type::OBJECT:
        return toQJsonObject(value.get_object().value_unsafe(), {});
    case element_type::STRING:
        return qString(value.get_string().value_unsafe());
    case element_type::INT64:
        return static_cast<qint64>(value.get_int64().value_unsafe());
    case element_type::UINT64:
    case element_type::DOUBLE:
        return value.get_double().value_unsafe();
    case element_type::BOOL:
        return value.get_bool().value_unsafe();
    case element_type::NULL_VALUE:
        break;
    }
    return QJsonValue::Null;
}

std::pair<std::string_view, std::string_view> parseMerge(element value, const JsonFields& model,
                                                         size_t index) {
    std::string_view text;
    if (value.get_string().get(text) == simdjson::SUCCESS) {
        const size_t space = text.find(' ');
        if (space != std::string_view::npos && text.find(' ', space + 1) == std::string_view::npos)
            return {text.substr(0, space), text.substr(space + 1)};
    } else if (simdjson::dom::array pair;
               value.get_array().get(pair) == simdjson::SUCCESS && pair.size() == 2) {
        std::string_view parts[2];
        int found = 0;
        for (element part : pair)
            if (part.get_string().get(parts[found]) == simdjson::SUCCESS) ++found;
        if (found == 2) return {parts[0], parts[1]};
    }
    model.fail("merge " + std::to_string(index + 1) + " is not two tokens separated by one space");
}

element requiredField(simdjson::dom::object object, const char* key, const JsonFields& fields) {
    element value;
    if (object.at_key(key).get(value) != simdjson::SUCCESS || value.is_null())
        fields.fail(std::string("missing field '") + key + "'");
    return value;
}
} // namespace

JsonTree::JsonTree(const QString& path) {
    simdjson::dom::element root;
    {
        const simdjson::padded_string text = readPadded(path);
        const auto error = parser_.parse(text).get(root);
        if (error) {
            readJsonObject(path); // Qt's parser says where the syntax error is, and throws
            throw TokenizerError(path.toStdString() + ": invalid JSON (" +
                                 simdjson::error_message(error) + ")");
        }
    }
    if (root.get_object().get(root_) != simdjson::SUCCESS)
        throw TokenizerError(path.toStdString() + ": expected a JSON object at the top level");
}

QJsonObject toQJsonObject(simdjson::dom::object object,
                          std::initializer_list<std::string_view> skip) {
    QJsonObject result;
    for (const auto field : object) {
        if (std::find(skip.begin(), skip.end(), field.key) != skip.end()) continue;
        result.insert(qString(field.key), toQJsonValue(field.value));
    }
    return result;
}

simdjson::dom::object objectField(simdjson::dom::object object, const char* key,
                                  const JsonFields& fields) {
    simdjson::dom::object value;
    if (requiredField(object, key, fields).get_object().get(value) != simdjson::SUCCESS)
        fields.fail(std::string("field '") + key + "' must be an object");
    return value;
}

simdjson::dom::array arrayField(simdjson::dom::object object, const char* key,
                                const JsonFields& fields) {
    simdjson::dom::array value;
    if (requiredField(object, key, fields).get_array().get(value) != simdjson::SUCCESS)
        fields.fail(std::string("field '") + key + "' must be an array");
    return value;
}

Vocab parseVocab(simdjson::dom::object entries, const std::string& where) {
    if (entries.size() > static_cast<size_t>(kMaxVocabEntries))
        throw TokenizerError(where + ": more than 10,000,000 entries");
    Vocab vocab;
    size_t textBytes = 0;
    for (const auto entry : entries)
        textBytes += entry.key.size();
    vocab.reserve(entries.size(), textBytes);
    for (const auto entry : entries) {
        double id = -1;
        if (!entry.value.is_number() || entry.value.get_double().get(id) != simdjson::SUCCESS ||
            id < 0 || id > INT_MAX || id != std::floor(id))
            throw TokenizerError(where + ": the id of '" + std::string(entry.key) +
                                 "' is not a non-negative integer");
        vocab.add(entry.key, static_cast<int>(id));
    }
    return vocab;
}

MergeList parseMerges(simdjson::dom::array merges, const JsonFields& model) {
    if (merges.size() > static_cast<size_t>(kMaxVocabEntries))
        model.fail("more than 10,000,000 merges");
    MergeList list;
    list.reserve(merges.size());
    for (element merge : merges)
        list.push_back(parseMerge(merge, model, list.size()));
    return list;
}
} // namespace headlight::tokenize
