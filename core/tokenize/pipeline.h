#pragma once
// The one tokenizer every file format is loaded into, run as Hugging Face's TokenizerImpl runs
// encode(): added tokens are cut out, the rest normalized, pre-tokenized and passed through the
// model, offsets are mapped back to the source text, and the post-processor adds special tokens.

#include "added_vocabulary.h"
#include "model.h"
#include "normalizers.h"
#include "post_processors.h"
#include "pre_tokenizers.h"
#include "tokenizer.h"

#include <memory>
#include <string>
#include <vector>

namespace headlight::tokenize {

struct PipelineParts {
    std::unique_ptr<Normalizer> normalizer;     // may be null
    std::unique_ptr<PreTokenizer> preTokenizer; // may be null
    std::unique_ptr<Model> model;
    std::unique_ptr<PostProcessor> postProcessor; // may be null
    std::vector<AddedToken> addedTokens;
    std::string kind;
};

class PipelineTokenizer final : public Tokenizer {
public:
    explicit PipelineTokenizer(PipelineParts parts);

    Encoding encode(const std::string& text, const std::optional<std::string>& pair = std::nullopt,
                    bool addSpecialTokens = true) const override;
    int vocabSize() const override;
    std::string tokenString(int id) const override;
    std::string kind() const override { return parts_.kind; }

private:
    Encoding encodeSequence(const std::string& text, int typeId) const;

    PipelineParts parts_;
    AddedVocabulary added_;
};
} // namespace headlight::tokenize
