#pragma once
// What transformers reads beside the vocabulary files: tokenizer_config.json (options, special
// tokens, added_tokens_decoder), special_tokens_map.json (special tokens, taking precedence) and
// config.json (model_type, to tell RoBERTa from GPT-2).

#include "added_vocabulary.h"

#include <QJsonObject>
#include <QString>
#include <optional>
#include <string>
#include <vector>

namespace headlight::tokenize {

class TokenizerConfig {
public:
    static TokenizerConfig read(const QString& folder); // absent files are fine

    std::optional<bool> flag(const char* key) const; // a boolean of tokenizer_config.json
    // The special token named `key` ("cls_token"...), or `fallback` when no file names it.
    std::string specialToken(const char* key, const std::string& fallback) const;
    // added_tokens_decoder of tokenizer_config.json, with their flags and ids.
    std::vector<AddedToken> declaredAddedTokens() const;
    std::string tokenizerClass() const;
    std::string modelType() const;

private:
    QJsonObject tokenizerConfig_;
    QJsonObject specialTokensMap_;
    QJsonObject modelConfig_;
    std::string configPath_;
};
} // namespace headlight::tokenize
