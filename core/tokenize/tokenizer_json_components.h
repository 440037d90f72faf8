#pragma once
// Builds the normalizer, pre-tokenizer and post-processor that a tokenizer.json describes. A
// component this project does not implement is refused with a TokenizerError naming it.

#include "normalizers.h"
#include "post_processors.h"
#include "pre_tokenizers.h"

#include <QJsonValue>
#include <memory>
#include <optional>
#include <string>

namespace headlight::tokenize {

// BERT options that transformers' BertTokenizerFast copies from tokenizer_config.json into the
// BertNormalizer of tokenizer.json when they are set there.
struct BertOverrides {
    std::optional<bool> lowercase;
    std::optional<bool> stripAccents;
    std::optional<bool> handleChineseChars;
};

// Each returns null for a JSON null; `where` prefixes error messages ("…/tokenizer.json").
std::unique_ptr<Normalizer> parseNormalizer(const QJsonValue& value, const std::string& where,
                                            const BertOverrides& overrides);
std::unique_ptr<PreTokenizer> parsePreTokenizer(const QJsonValue& value, const std::string& where);
std::unique_ptr<PostProcessor> parsePostProcessor(const QJsonValue& value,
                                                  const std::string& where);

// Whether a pre-tokenizer description is, or contains, ByteLevel.
bool usesByteLevel(const QJsonValue& preTokenizer);
} // namespace headlight::tokenize
