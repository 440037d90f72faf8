#pragma once
// tokenizer.json and vocab.json parsed by simdjson (docs/dependencies.md says why not
// QJsonDocument: the Hub's files have 128k-262k tokens and 280k-515k merges, and Qt's parser drops
// a leading U+FEFF from every string, which made Gemma 3's file unreadable). The vocabulary and
// the merges are read from the tree directly; the small parts (normalizer, pre-tokenizer, ...)
// become Qt JSON for JsonFields.

#include "bpe_model.h"
#include "model.h"
#include "tokenizer_files.h"

#include <QJsonObject>
#include <QString>
#include <initializer_list>
#include <simdjson.h>
#include <string>
#include <string_view>

namespace headlight::tokenize {

class JsonTree {
public:
    // Throws TokenizerError naming the file and, for a syntax error, the line and column.
    explicit JsonTree(const QString& path);
    simdjson::dom::object root() const { return root_; }

private:
    simdjson::dom::parser parser_; // owns every string the tree's views point into
    simdjson::dom::object root_;
};

// `object` as Qt JSON without the fields named in `skip`.
QJsonObject toQJsonObject(simdjson::dom::object object,
                          std::initializer_list<std::string_view> skip);

// The value of `key` in `object`, which `fields` describes (for messages); fails when it is
// missing or not of the wanted kind.
simdjson::dom::object objectField(simdjson::dom::object object, const char* key,
                                  const JsonFields& fields);
simdjson::dom::array arrayField(simdjson::dom::object object, const char* key,
                                const JsonFields& fields);

// A {"token": id, ...} object (vocab.json, or "vocab" in tokenizer.json).
Vocab parseVocab(simdjson::dom::object entries, const std::string& where);
// tokenizer.json's "merges": "a b" strings or ["a", "b"] pairs. Views into `merges`.
MergeList parseMerges(simdjson::dom::array merges, const JsonFields& model);
} // namespace headlight::tokenize
