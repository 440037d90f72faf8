#pragma once
// The pre-tokenizers of Hugging Face's tokenizer.json used by BERT, GPT-2, RoBERTa and Llama-family
// checkpoints: each cuts the untokenized pieces of a PreTokenizedText into words for the model.

#include "pattern.h"
#include "pre_tokenized_text.h"

#include <memory>
#include <vector>

namespace headlight::tokenize {

class PreTokenizer {
public:
    virtual ~PreTokenizer() = default;
    virtual void preTokenize(PreTokenizedText& text) const = 0;
};

// GPT-2's byte-to-unicode alphabet: printable bytes map to themselves, the rest to U+0100 and up,
// so every byte string is a string of visible characters.
char32_t byteLevelChar(unsigned char byte);

class ByteLevelPreTokenizer final : public PreTokenizer {
public:
    ByteLevelPreTokenizer(bool addPrefixSpace, bool useRegex);
    void preTokenize(PreTokenizedText& text) const override;

private:
    bool addPrefixSpace_;
    bool useRegex_;
    Pattern regex_;
};

enum class PrependScheme { Always, First, Never };

// SentencePiece style: spaces become U+2581 and words start at each one.
class MetaspacePreTokenizer final : public PreTokenizer {
public:
    MetaspacePreTokenizer(char32_t replacement, PrependScheme scheme, bool split)
        : replacement_(replacement)
        , scheme_(scheme)
        , split_(split) {}
    void preTokenize(PreTokenizedText& text) const override;

private:
    char32_t replacement_;
    PrependScheme scheme_;
    bool split_;
};

class SplitPreTokenizer final : public PreTokenizer {
public:
    SplitPreTokenizer(Pattern pattern, SplitBehavior behavior, bool invert)
        : pattern_(std::move(pattern))
        , behavior_(behavior)
        , invert_(invert) {}
    void preTokenize(PreTokenizedText& text) const override;

private:
    Pattern pattern_;
    SplitBehavior behavior_;
    bool invert_;
};

// Splits on whitespace (dropped) and on each punctuation character (kept alone).
class BertPreTokenizer final : public PreTokenizer {
public:
    void preTokenize(PreTokenizedText& text) const override;
};

// Runs of word characters and runs of other non-space characters (the regex \w+|[^\w\s]+).
class WhitespacePreTokenizer final : public PreTokenizer {
public:
    void preTokenize(PreTokenizedText& text) const override;
};

class WhitespaceSplitPreTokenizer final : public PreTokenizer {
public:
    void preTokenize(PreTokenizedText& text) const override;
};

class PreTokenizerSequence final : public PreTokenizer {
public:
    explicit PreTokenizerSequence(std::vector<std::unique_ptr<PreTokenizer>> steps)
        : steps_(std::move(steps)) {}
    void preTokenize(PreTokenizedText& text) const override;

private:
    std::vector<std::unique_ptr<PreTokenizer>> steps_;
};
} // namespace headlight::tokenize
