#include "tokenizer_config.h"

#include "tokenizer.h"
#include "tokenizer_files.h"

#include <climits>

namespace headlight::tokenize {

TokenizerConfig TokenizerConfig::read(const QString& folder) {
    TokenizerConfig config;
    config.configPath_ = (folder + "/tokenizer_config.json").toStdString();
    config.tokenizerConfig_ =
        readOptionalJsonObject(folder + "/tokenizer_config.json").value_or(QJsonObject());
    config.specialTokensMap_ =
        readOptionalJsonObject(folder + "/special_tokens_map.json").value_or(QJsonObject());
    config.modelConfig_ = readOptionalJsonObject(folder + "/config.json").value_or(QJsonObject());
    return config;
}

std::optional<bool> TokenizerConfig::flag(const char* key) const {
    return JsonFields(tokenizerConfig_, configPath_).optionalBoolean(key);
}

std::string TokenizerConfig::specialToken(const char* key, const std::string& fallback) const {
    if (const auto mapped = tokenContent(specialTokensMap_.value(QLatin1String(key))))
        return *mapped;
    if (const auto configured = tokenContent(tokenizerConfig_.value(QLatin1String(key))))
        return *configured;
    return fallback;
}

std::vector<AddedToken> TokenizerConfig::declaredAddedTokens() const {
    std::vector<AddedToken> tokens;
    const JsonFields decoder(tokenizerConfig_.value("added_tokens_decoder").toObject(),
                             configPath_ + ": added_tokens_decoder");
    for (auto it = decoder.raw().begin(); it != decoder.raw().end(); ++it) {
        const std::string where = decoder.where() + ": " + it.key().toStdString();
        bool isNumber = false;
        const int id = it.key().toInt(&isNumber);
        if (!isNumber || id < 0 || !it.value().isObject())
            throw TokenizerError(where + ": expected an id and an object");
        const JsonFields fields(it.value().toObject(), where);
        AddedToken token;
        token.content = fields.string("content");
        token.id = id;
        token.singleWord = fields.boolean("single_word", false);
        token.lstrip = fields.boolean("lstrip", false);
        token.rstrip = fields.boolean("rstrip", false);
        token.special = fields.boolean("special", false);
        token.normalized = fields.boolean("normalized", !token.special);
        tokens.push_back(std::move(token));
    }
    return tokens;
}

std::string TokenizerConfig::tokenizerClass() const {
    return tokenizerConfig_.value("tokenizer_class").toString().toStdString();
}

std::string TokenizerConfig::modelType() const {
    return modelConfig_.value("model_type").toString().toStdString();
}
} // namespace headlight::tokenize
