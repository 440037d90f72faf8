#include "tokenizer_json_components.h"

#include "tokenizer.h"
#include "tokenizer_files.h"
#include "unicode_text.h"

#include <QJsonArray>

namespace headlight::tokenize {
namespace {

JsonFields fieldsOf(const QJsonValue& value, const std::string& where) {
    if (!value.isObject()) throw TokenizerError(where + ": expected an object");
    return {value.toObject(), where};
}

std::string typeOf(const JsonFields& fields) {
    return fields.string("type");
}

[[noreturn]] void unsupported(const JsonFields& fields, const char* what) {
    fields.fail(std::string("unsupported ") + what + " '" + typeOf(fields) + "'");
}

// Replace and Split patterns: {"String": "..."} or {"Regex": "..."}.
Pattern parsePattern(const JsonFields& fields) {
    const JsonFields pattern = fields.child("pattern");
    if (pattern.has("String")) return Pattern::literal(decodeUtf8(pattern.string("String")));
    if (!pattern.has("Regex")) pattern.fail("expected 'String' or 'Regex'");
    try {
        return Pattern::regex(pattern.string("Regex"));
    } catch (const TokenizerError& error) {
        pattern.fail(error.what());
    }
}

std::unique_ptr<Normalizer> parseBertNormalizer(const JsonFields& fields,
                                                const BertOverrides& overrides) {
    BertNormalizerOptions options;
    options.cleanText = fields.boolean("clean_text", true);
    options.handleChineseChars =
        overrides.handleChineseChars.value_or(fields.boolean("handle_chinese_chars", true));
    options.stripAccents =
        overrides.stripAccents ? overrides.stripAccents : fields.optionalBoolean("strip_accents");
    options.lowercase = overrides.lowercase.value_or(fields.boolean("lowercase", true));
    return std::make_unique<BertNormalizer>(options);
}

// transformers only rewrites a BertNormalizer at the top, so nested ones take no overrides.
std::unique_ptr<Normalizer> parseNormalizerSequence(const JsonFields& fields) {
    std::vector<std::unique_ptr<Normalizer>> steps;
    const QJsonArray items = fields.array("normalizers");
    for (qsizetype i = 0; i < items.size(); ++i)
        if (auto step =
                parseNormalizer(items[i], fields.where() + "[" + std::to_string(i) + "]", {}))
            steps.push_back(std::move(step));
    return std::make_unique<NormalizerSequence>(std::move(steps));
}

std::optional<NormalForm> normalFormNamed(const std::string& type) {
    if (type == "NFC") return NormalForm::NFC;
    if (type == "NFD") return NormalForm::NFD;
    if (type == "NFKC") return NormalForm::NFKC;
    if (type == "NFKD") return NormalForm::NFKD;
    return std::nullopt;
}

SplitBehavior parseBehavior(const JsonFields& fields) {
    const std::string name = fields.string("behavior");
    if (name == "Removed") return SplitBehavior::Removed;
    if (name == "Isolated") return SplitBehavior::Isolated;
    if (name == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
    if (name == "MergedWithNext") return SplitBehavior::MergedWithNext;
    if (name == "Contiguous") return SplitBehavior::Contiguous;
    fields.fail("unknown split behavior '" + name + "'");
}

std::unique_ptr<PreTokenizer> parseMetaspace(const JsonFields& fields) {
    const std::u32string replacement = decodeUtf8(fields.string("replacement"));
    if (replacement.size() != 1) fields.fail("'replacement' must be one character");
    PrependScheme scheme = PrependScheme::Always;
    const std::string schemeName = fields.optionalString("prepend_scheme").value_or("always");
    if (schemeName == "first")
        scheme = PrependScheme::First;
    else if (schemeName == "never")
        scheme = PrependScheme::Never;
    else if (schemeName != "always")
        fields.fail("unknown prepend_scheme '" + schemeName + "'");
    // Files written before prepend_scheme existed say add_prefix_space instead.
    if (!fields.boolean("add_prefix_space", true)) {
        if (fields.has("prepend_scheme") && scheme != PrependScheme::Never)
            fields.fail("add_prefix_space does not match prepend_scheme");
        scheme = PrependScheme::Never;
    }
    return std::make_unique<MetaspacePreTokenizer>(replacement[0], scheme,
                                                   fields.boolean("split", true));
}

std::unique_ptr<PreTokenizer> parsePreTokenizerSequence(const JsonFields& fields) {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    const QJsonArray items = fields.array("pretokenizers");
    for (qsizetype i = 0; i < items.size(); ++i)
        if (auto step = parsePreTokenizer(items[i], fields.where() + "[" + std::to_string(i) + "]"))
            steps.push_back(std::move(step));
    return std::make_unique<PreTokenizerSequence>(std::move(steps));
}

NamedToken parseNamedToken(const JsonFields& fields, const char* key) {
    const QJsonArray pair = fields.array(key);
    if (pair.size() != 2 || !pair[0].isString() || !pair[1].isDouble())
        fields.fail(std::string("field '") + key + "' must be [token, id]");
    return {pair[0].toString().toStdString(), pair[1].toInt()};
}

TemplatePiece parseTemplatePiece(const QJsonValue& value, const std::string& where) {
    const JsonFields piece = fieldsOf(value, where);
    TemplatePiece parsed;
    parsed.isSequence = piece.has("Sequence");
    if (!parsed.isSequence && !piece.has("SpecialToken"))
        piece.fail("expected 'Sequence' or 'SpecialToken'");
    const JsonFields body = piece.child(parsed.isSequence ? "Sequence" : "SpecialToken");
    parsed.typeId = body.integer("type_id", 0, 0, 1 << 20);
    const std::string id = body.string("id");
    if (parsed.isSequence && id != "A" && id != "B") body.fail("sequence id must be 'A' or 'B'");
    parsed.sequence = id == "B" ? 1 : 0;
    if (!parsed.isSequence) parsed.specialToken = id;
    return parsed;
}

std::vector<TemplatePiece> parseTemplate(const JsonFields& fields, const char* key) {
    std::vector<TemplatePiece> pieces;
    const QJsonArray items = fields.array(key);
    for (qsizetype i = 0; i < items.size(); ++i)
        pieces.push_back(parseTemplatePiece(items[i], fields.where() + ": " + key + "[" +
                                                          std::to_string(i) + "]"));
    return pieces;
}

SpecialTokenIds parseSpecialToken(const JsonFields& fields) {
    SpecialTokenIds token;
    for (const QJsonValue& id : fields.array("ids")) {
        if (!id.isDouble() || id.toInt(-1) < 0)
            fields.fail("'ids' must hold non-negative integers");
        token.ids.push_back(id.toInt());
    }
    for (const QJsonValue& text : fields.array("tokens")) {
        if (!text.isString()) fields.fail("'tokens' must hold strings");
        token.tokens.push_back(text.toString().toStdString());
    }
    if (token.ids.size() != token.tokens.size()) fields.fail("'ids' and 'tokens' differ in length");
    return token;
}

std::unique_ptr<PostProcessor> parseTemplateProcessing(const JsonFields& fields) {
    std::map<std::string, SpecialTokenIds> specialTokens;
    const JsonFields tokens = fields.child("special_tokens");
    for (auto it = tokens.raw().begin(); it != tokens.raw().end(); ++it)
        specialTokens[it.key().toStdString()] =
            parseSpecialToken(fieldsOf(it.value(), tokens.where() + ": " + it.key().toStdString()));
    try {
        return std::make_unique<TemplateProcessing>(parseTemplate(fields, "single"),
                                                    parseTemplate(fields, "pair"),
                                                    std::move(specialTokens));
    } catch (const TokenizerError& error) {
        fields.fail(error.what());
    }
}

std::unique_ptr<PostProcessor> parsePostProcessorSequence(const JsonFields& fields) {
    std::vector<std::unique_ptr<PostProcessor>> steps;
    const QJsonArray items = fields.array("processors");
    for (qsizetype i = 0; i < items.size(); ++i)
        if (auto step =
                parsePostProcessor(items[i], fields.where() + "[" + std::to_string(i) + "]"))
            steps.push_back(std::move(step));
    return std::make_unique<PostProcessorSequence>(std::move(steps));
}
} // namespace

std::unique_ptr<Normalizer> parseNormalizer(const QJsonValue& value, const std::string& where,
                                            const BertOverrides& overrides) {
    if (value.isNull() || value.isUndefined()) return nullptr;
    const JsonFields fields = fieldsOf(value, where);
    const std::string type = typeOf(fields);
    if (type == "BertNormalizer") return parseBertNormalizer(fields, overrides);
    if (type == "Sequence") return parseNormalizerSequence(fields);
    if (type == "Lowercase") return std::make_unique<LowercaseNormalizer>();
    if (type == "StripAccents") return std::make_unique<StripAccentsNormalizer>();
    if (type == "Prepend")
        return std::make_unique<PrependNormalizer>(decodeUtf8(fields.string("prepend")));
    if (type == "Replace")
        return std::make_unique<ReplaceNormalizer>(parsePattern(fields),
                                                   decodeUtf8(fields.string("content")));
    if (const auto form = normalFormNamed(type)) return std::make_unique<UnicodeNormalizer>(*form);
    unsupported(fields, "normalizer");
}

std::unique_ptr<PreTokenizer> parsePreTokenizer(const QJsonValue& value, const std::string& where) {
    if (value.isNull() || value.isUndefined()) return nullptr;
    const JsonFields fields = fieldsOf(value, where);
    const std::string type = typeOf(fields);
    if (type == "ByteLevel")
        return std::make_unique<ByteLevelPreTokenizer>(fields.boolean("add_prefix_space", true),
                                                       fields.boolean("use_regex", true));
    if (type == "Metaspace") return parseMetaspace(fields);
    if (type == "Split")
        return std::make_unique<SplitPreTokenizer>(parsePattern(fields), parseBehavior(fields),
                                                   fields.boolean("invert", false));
    if (type == "BertPreTokenizer") return std::make_unique<BertPreTokenizer>();
    if (type == "Whitespace") return std::make_unique<WhitespacePreTokenizer>();
    if (type == "WhitespaceSplit") return std::make_unique<WhitespaceSplitPreTokenizer>();
    if (type == "Sequence") return parsePreTokenizerSequence(fields);
    unsupported(fields, "pre_tokenizer");
}

std::unique_ptr<PostProcessor> parsePostProcessor(const QJsonValue& value,
                                                  const std::string& where) {
    if (value.isNull() || value.isUndefined()) return nullptr;
    const JsonFields fields = fieldsOf(value, where);
    const std::string type = typeOf(fields);
    if (type == "TemplateProcessing") return parseTemplateProcessing(fields);
    if (type == "BertProcessing")
        return std::make_unique<BertProcessing>(parseNamedToken(fields, "sep"),
                                                parseNamedToken(fields, "cls"));
    if (type == "RobertaProcessing")
        return std::make_unique<RobertaProcessing>(
            parseNamedToken(fields, "sep"), parseNamedToken(fields, "cls"),
            fields.boolean("trim_offsets", true), fields.boolean("add_prefix_space", true));
    if (type == "ByteLevel")
        return std::make_unique<ByteLevelProcessing>(fields.boolean("trim_offsets", true),
                                                     fields.boolean("add_prefix_space", true));
    if (type == "Sequence") return parsePostProcessorSequence(fields);
    unsupported(fields, "post_processor");
}

bool usesByteLevel(const QJsonValue& preTokenizer) {
    const QJsonObject object = preTokenizer.toObject();
    if (object.value("type").toString() == "ByteLevel") return true;
    for (const QJsonValue& step : object.value("pretokenizers").toArray())
        if (usesByteLevel(step)) return true;
    return false;
}
} // namespace headlight::tokenize
