// Folders without tokenizer.json, built as transformers' slow-to-fast converters build them
// (BertConverter, GPT2Converter, RobertaConverter), with the special tokens transformers registers
// as added tokens so that "[CLS]" or "<|endoftext|>" typed in the text stay whole.
#include "bpe_model.h"
#include "json_tree.h"
#include "loaders.h"
#include "pipeline.h"
#include "tokenizer_config.h"
#include "tokenizer_files.h"
#include "wordpiece_model.h"

#include <algorithm>

namespace headlight::tokenize {
namespace {

struct SpecialDefault {
    const char* key;
    const char* content;
    bool lstrip = false;
};

// Special tokens in the vocabulary, then those tokenizer_config.json declares (whose flags win).
std::vector<AddedToken> specialTokens(const TokenizerConfig& config, const Vocab& vocab,
                                      const std::vector<SpecialDefault>& defaults) {
    std::vector<AddedToken> tokens = config.declaredAddedTokens();
    for (AddedToken& token : tokens)
        token.id = vocab.idOf(token.content).value_or(token.id);
    for (const SpecialDefault& special : defaults) {
        const std::string content = config.specialToken(special.key, special.content);
        const auto id = vocab.idOf(content);
        const bool declared = std::any_of(tokens.begin(), tokens.end(), [&](const AddedToken& t) {
            return t.content == content;
        });
        if (!id || declared) continue;
        AddedToken token;
        token.content = content;
        token.id = *id;
        token.lstrip = special.lstrip;
        tokens.push_back(std::move(token));
    }
    return tokens;
}

NamedToken requiredToken(const Vocab& vocab, const std::string& token, const QString& path) {
    const auto id = vocab.idOf(token);
    if (!id)
        throw TokenizerError(path.toStdString() + ": the special token '" + token +
                             "' is not in the vocabulary");
    return {token, *id};
}

TemplatePiece sequencePiece(int sequence, int typeId) {
    return {true, sequence, {}, typeId};
}
TemplatePiece specialPiece(const std::string& token, int typeId) {
    return {false, 0, token, typeId};
}

std::unique_ptr<PostProcessor> bertTemplate(const NamedToken& cls, const NamedToken& sep) {
    std::vector<TemplatePiece> single{specialPiece(cls.token, 0), sequencePiece(0, 0),
                                      specialPiece(sep.token, 0)};
    std::vector<TemplatePiece> pair = single;
    pair.push_back(sequencePiece(1, 1));
    pair.push_back(specialPiece(sep.token, 1));
    std::map<std::string, SpecialTokenIds> ids{{cls.token, {{cls.id}, {cls.token}}},
                                               {sep.token, {{sep.id}, {sep.token}}}};
    return std::make_unique<TemplateProcessing>(std::move(single), std::move(pair), std::move(ids));
}

std::unique_ptr<PostProcessor> bosTemplate(const NamedToken& bos) {
    std::vector<TemplatePiece> single{specialPiece(bos.token, 0), sequencePiece(0, 0)};
    std::vector<TemplatePiece> pair = single;
    pair.push_back(sequencePiece(1, 1));
    std::map<std::string, SpecialTokenIds> ids{{bos.token, {{bos.id}, {bos.token}}}};
    return std::make_unique<TemplateProcessing>(std::move(single), std::move(pair), std::move(ids));
}

// merges.txt's lines as pairs of views into `lines`; the "#version" line is skipped.
MergeList mergesOf(const std::vector<std::string>& lines, const QString& path) {
    MergeList merges;
    merges.reserve(lines.size());
    for (size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].rfind("#version", 0) == 0) continue;
        // As Python's str.split(" ") with the empty parts dropped.
        std::vector<std::string_view> parts;
        const std::string_view line = lines[i];
        for (size_t begin = 0; begin < line.size();) {
            const size_t end = std::min(line.find(' ', begin), line.size());
            if (end > begin) parts.push_back(line.substr(begin, end - begin));
            begin = end + 1;
        }
        if (parts.size() != 2)
            throw TokenizerError(path.toStdString() + " line " + std::to_string(i + 1) +
                                 ": expected two tokens separated by a space");
        merges.emplace_back(parts[0], parts[1]);
    }
    return merges;
}

bool isRobertaStyle(const TokenizerConfig& config) {
    const QString tokenizerClass = QString::fromStdString(config.tokenizerClass());
    for (const char* family : {"Roberta", "Bart", "Longformer"})
        if (tokenizerClass.startsWith(QLatin1String(family))) return true;
    const std::string modelType = config.modelType();
    return modelType == "roberta" || modelType == "bart" || modelType == "longformer";
}

void addByteLevelGpt2Parts(PipelineParts& parts, const TokenizerConfig& config, const Vocab& vocab,
                           const QString& path) {
    parts.addedTokens = specialTokens(config, vocab,
                                      {{"unk_token", "<|endoftext|>"},
                                       {"bos_token", "<|endoftext|>"},
                                       {"eos_token", "<|endoftext|>"}});
    const bool addPrefixSpace = config.flag("add_prefix_space").value_or(false);
    if (config.flag("add_bos_token").value_or(false))
        parts.postProcessor = bosTemplate(
            requiredToken(vocab, config.specialToken("bos_token", "<|endoftext|>"), path));
    else
        parts.postProcessor = std::make_unique<ByteLevelProcessing>(false, addPrefixSpace);
}

void addRobertaParts(PipelineParts& parts, const TokenizerConfig& config, const Vocab& vocab,
                     const QString& path) {
    parts.addedTokens = specialTokens(config, vocab,
                                      {{"bos_token", "<s>"},
                                       {"eos_token", "</s>"},
                                       {"unk_token", "<unk>"},
                                       {"sep_token", "</s>"},
                                       {"cls_token", "<s>"},
                                       {"pad_token", "<pad>"},
                                       {"mask_token", "<mask>", true}});
    parts.postProcessor = std::make_unique<RobertaProcessing>(
        requiredToken(vocab, config.specialToken("sep_token", "</s>"), path),
        requiredToken(vocab, config.specialToken("cls_token", "<s>"), path),
        config.flag("trim_offsets").value_or(true),
        config.flag("add_prefix_space").value_or(false));
}
} // namespace

std::unique_ptr<Tokenizer> loadWordPieceVocab(const QString& folder) {
    const QString path = folder + "/vocab.txt";
    const std::vector<std::string> lines = readTextLines(path);
    Vocab vocab;
    for (size_t i = 0; i < lines.size(); ++i)
        vocab.add(lines[i], static_cast<int>(i));
    const TokenizerConfig config = TokenizerConfig::read(folder);
    BertNormalizerOptions normalizer;
    normalizer.lowercase = config.flag("do_lower_case").value_or(true);
    normalizer.stripAccents = config.flag("strip_accents");
    normalizer.handleChineseChars = config.flag("tokenize_chinese_chars").value_or(true);
    PipelineParts parts;
    parts.kind = "wordpiece";
    parts.normalizer = std::make_unique<BertNormalizer>(normalizer);
    parts.preTokenizer = std::make_unique<BertPreTokenizer>();
    parts.postProcessor =
        bertTemplate(requiredToken(vocab, config.specialToken("cls_token", "[CLS]"), path),
                     requiredToken(vocab, config.specialToken("sep_token", "[SEP]"), path));
    parts.addedTokens = specialTokens(config, vocab,
                                      {{"unk_token", "[UNK]"},
                                       {"sep_token", "[SEP]"},
                                       {"pad_token", "[PAD]"},
                                       {"cls_token", "[CLS]"},
                                       {"mask_token", "[MASK]"}});
    WordPieceOptions options;
    options.unkToken = config.specialToken("unk_token", "[UNK]");
    parts.model = std::make_unique<WordPieceModel>(std::move(vocab), std::move(options));
    return std::make_unique<PipelineTokenizer>(std::move(parts));
}

std::unique_ptr<Tokenizer> loadByteLevelBpe(const QString& folder) {
    const QString vocabPath = folder + "/vocab.json";
    const Vocab vocab = parseVocab(JsonTree(vocabPath).root(), vocabPath.toStdString());
    const TokenizerConfig config = TokenizerConfig::read(folder);
    PipelineParts parts;
    parts.kind = "byte-level-bpe";
    parts.preTokenizer = std::make_unique<ByteLevelPreTokenizer>(
        config.flag("add_prefix_space").value_or(false), true);
    if (isRobertaStyle(config))
        addRobertaParts(parts, config, vocab, vocabPath);
    else
        addByteLevelGpt2Parts(parts, config, vocab, vocabPath);
    const QString mergesPath = folder + "/merges.txt";
    const std::vector<std::string> mergeLines = readTextLines(mergesPath);
    parts.model = std::make_unique<BpeModel>(vocab, mergesOf(mergeLines, mergesPath), BpeOptions{},
                                             mergesPath.toStdString());
    return std::make_unique<PipelineTokenizer>(std::move(parts));
}
} // namespace headlight::tokenize
