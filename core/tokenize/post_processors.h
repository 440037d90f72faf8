#pragma once
// The post-processors of Hugging Face's tokenizer.json: they add the model's special tokens around
// one or two encoded sequences, set token type ids, and (byte-level models) trim the spaces that
// byte-level tokens carry out of their offsets.

#include "tokenizer.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace headlight::tokenize {

void appendEncoding(Encoding& to, const Encoding& from);

class PostProcessor {
public:
    virtual ~PostProcessor() = default;
    // `encodings`: one or two sequences whose type ids are already 0 and 1 (as HF's
    // PostProcessor::process sets them). The result is concatenated in order.
    virtual std::vector<Encoding> process(std::vector<Encoding> encodings,
                                          bool addSpecialTokens) const = 0;
};

struct SpecialTokenIds {
    std::vector<int> ids;
    std::vector<std::string> tokens;
};

struct TemplatePiece {
    bool isSequence = false;
    int sequence = 0;         // 0: A, 1: B (when isSequence)
    std::string specialToken; // key into the special tokens (otherwise)
    int typeId = 0;
};

class TemplateProcessing final : public PostProcessor {
public:
    // Throws TokenizerError when a piece names a special token not in `specialTokens`.
    TemplateProcessing(std::vector<TemplatePiece> single, std::vector<TemplatePiece> pair,
                       std::map<std::string, SpecialTokenIds> specialTokens);
    std::vector<Encoding> process(std::vector<Encoding> encodings,
                                  bool addSpecialTokens) const override;

private:
    std::vector<TemplatePiece> single_;
    std::vector<TemplatePiece> pair_;
    std::map<std::string, SpecialTokenIds> specialTokens_;
};

struct NamedToken {
    std::string token;
    int id = 0;
};

// [CLS] A [SEP] B [SEP], type ids 0 then 1.
class BertProcessing final : public PostProcessor {
public:
    BertProcessing(NamedToken sep, NamedToken cls)
        : sep_(std::move(sep))
        , cls_(std::move(cls)) {}
    std::vector<Encoding> process(std::vector<Encoding> encodings,
                                  bool addSpecialTokens) const override;

private:
    NamedToken sep_;
    NamedToken cls_;
};

// <s> A </s></s> B </s>, every type id 0, offsets trimmed as ByteLevel's.
class RobertaProcessing final : public PostProcessor {
public:
    RobertaProcessing(NamedToken sep, NamedToken cls, bool trimOffsets, bool addPrefixSpace)
        : sep_(std::move(sep))
        , cls_(std::move(cls))
        , trimOffsets_(trimOffsets)
        , addPrefixSpace_(addPrefixSpace) {}
    std::vector<Encoding> process(std::vector<Encoding> encodings,
                                  bool addSpecialTokens) const override;

private:
    NamedToken sep_;
    NamedToken cls_;
    bool trimOffsets_;
    bool addPrefixSpace_;
};

class ByteLevelProcessing final : public PostProcessor {
public:
    ByteLevelProcessing(bool trimOffsets, bool addPrefixSpace)
        : trimOffsets_(trimOffsets)
        , addPrefixSpace_(addPrefixSpace) {}
    std::vector<Encoding> process(std::vector<Encoding> encodings,
                                  bool addSpecialTokens) const override;

private:
    bool trimOffsets_;
    bool addPrefixSpace_;
};

class PostProcessorSequence final : public PostProcessor {
public:
    explicit PostProcessorSequence(std::vector<std::unique_ptr<PostProcessor>> steps)
        : steps_(std::move(steps)) {}
    std::vector<Encoding> process(std::vector<Encoding> encodings,
                                  bool addSpecialTokens) const override;

private:
    std::vector<std::unique_ptr<PostProcessor>> steps_;
};
} // namespace headlight::tokenize
