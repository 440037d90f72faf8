// tokenizer.json (Hugging Face tokenizers' own format): model, normalizer, pre-tokenizer,
// post-processor and added tokens. Padding, truncation and the decoder are ignored: transformers
// turns the first two off for a plain call, and nothing here decodes.
#include "bpe_model.h"
#include "json_tree.h"
#include "loaders.h"
#include "pipeline.h"
#include "tokenizer_config.h"
#include "tokenizer_files.h"
#include "tokenizer_json_components.h"
#include "unicode_text.h"
#include "wordpiece_model.h"

#include <QJsonArray>
#include <climits>

namespace headlight::tokenize {
namespace {

// `tree` is the model object itself, for the vocabulary and the merges; `model` has the rest.
std::unique_ptr<Model> parseBpe(const JsonFields& model, simdjson::dom::object tree) {
    const MergeList merges = parseMerges(arrayField(tree, "merges", model), model);
    const QJsonValue dropout = model.raw().value("dropout");
    if (dropout.isDouble() && dropout.toDouble() > 0)
        model.fail("BPE dropout is not supported (it makes encoding random)");
    BpeOptions options;
    options.unkToken = model.optionalString("unk_token");
    options.continuingSubwordPrefix =
        model.optionalString("continuing_subword_prefix").value_or("");
    options.endOfWordSuffix = model.optionalString("end_of_word_suffix").value_or("");
    options.fuseUnk = model.boolean("fuse_unk", false);
    options.byteFallback = model.boolean("byte_fallback", false);
    options.ignoreMerges = model.boolean("ignore_merges", false);
    return std::make_unique<BpeModel>(
        parseVocab(objectField(tree, "vocab", model), model.where() + ": vocab"), merges,
        std::move(options), model.where());
}

std::unique_ptr<Model> parseWordPiece(const JsonFields& model, simdjson::dom::object tree) {
    WordPieceOptions options;
    options.unkToken = model.optionalString("unk_token").value_or("[UNK]");
    options.continuingSubwordPrefix =
        model.optionalString("continuing_subword_prefix").value_or("##");
    options.maxInputCharsPerWord = model.integer("max_input_chars_per_word", 100, 0, INT_MAX);
    return std::make_unique<WordPieceModel>(
        parseVocab(objectField(tree, "vocab", model), model.where() + ": vocab"),
        std::move(options));
}

// Files from before "type" was written are told apart by their fields, as serde's untagged enum
// does.
std::string modelType(const JsonFields& model) {
    if (model.has("type")) return model.string("type");
    if (model.has("merges")) return "BPE";
    if (model.has("max_input_chars_per_word") || model.has("continuing_subword_prefix"))
        return "WordPiece";
    model.fail("cannot tell the model type (no 'type' field)");
}

AddedToken parseAddedToken(const QJsonValue& value, const std::string& where, const Model& model) {
    if (!value.isObject()) throw TokenizerError(where + ": expected an object");
    const JsonFields fields(value.toObject(), where);
    AddedToken token;
    token.content = fields.string("content");
    // As HF: a token the model already has keeps the model's id.
    token.id = model.vocab().idOf(token.content).value_or(fields.integer("id", 0, 0, INT_MAX));
    token.singleWord = fields.boolean("single_word", false);
    token.lstrip = fields.boolean("lstrip", false);
    token.rstrip = fields.boolean("rstrip", false);
    token.special = fields.boolean("special", false);
    token.normalized = fields.boolean("normalized", !token.special);
    return token;
}

std::vector<AddedToken> parseAddedTokens(const JsonFields& root, const Model& model) {
    std::vector<AddedToken> tokens;
    if (!root.has("added_tokens")) return tokens;
    const QJsonArray list = root.array("added_tokens");
    if (list.size() > kMaxVocabEntries) root.fail("more than 10,000,000 added tokens");
    for (qsizetype i = 0; i < list.size(); ++i)
        tokens.push_back(parseAddedToken(
            list[i], root.where() + ": added_tokens[" + std::to_string(i) + "]", model));
    return tokens;
}

BertOverrides bertOverrides(const TokenizerConfig& config) {
    return {config.flag("do_lower_case"), config.flag("strip_accents"),
            config.flag("tokenize_chinese_chars")};
}
} // namespace

std::unique_ptr<Tokenizer> loadTokenizerJson(const QString& folder) {
    const QString path = folder + "/tokenizer.json";
    const JsonTree tree(path);
    const JsonFields root(toQJsonObject(tree.root(), {"model"}), path.toStdString());
    const std::string where = root.where();
    if (root.has("version") && root.string("version") != "1.0")
        root.fail("unsupported version '" + root.string("version") + "'");
    const simdjson::dom::object modelTree = objectField(tree.root(), "model", root);
    const JsonFields model(toQJsonObject(modelTree, {"vocab", "merges"}), where + ": model");
    const std::string type = modelType(model);
    PipelineParts parts;
    if (type == "BPE")
        parts.model = parseBpe(model, modelTree);
    else if (type == "WordPiece")
        parts.model = parseWordPiece(model, modelTree);
    else
        model.fail("unsupported model '" + type + "'");
    const QJsonValue preTokenizer = root.raw().value("pre_tokenizer");
    parts.kind = type == "WordPiece"           ? "wordpiece"
                 : usesByteLevel(preTokenizer) ? "byte-level-bpe"
                                               : "bpe";
    parts.normalizer = parseNormalizer(root.raw().value("normalizer"), where + ": normalizer",
                                       bertOverrides(TokenizerConfig::read(folder)));
    parts.preTokenizer = parsePreTokenizer(preTokenizer, where + ": pre_tokenizer");
    parts.postProcessor =
        parsePostProcessor(root.raw().value("post_processor"), where + ": post_processor");
    parts.addedTokens = parseAddedTokens(root, *parts.model);
    return std::make_unique<PipelineTokenizer>(std::move(parts));
}
} // namespace headlight::tokenize
