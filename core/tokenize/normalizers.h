#pragma once
// The normalizers of Hugging Face's tokenizer.json that BERT, GPT-2, RoBERTa and Llama-family
// checkpoints use. Each edits a NormalizedText in place, keeping every character's source span.

#include "normalized_text.h"
#include "pattern.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace headlight::tokenize {

class Normalizer {
public:
    virtual ~Normalizer() = default;
    virtual void normalize(NormalizedText& text) const = 0;
};

struct BertNormalizerOptions {
    bool cleanText = true;
    bool handleChineseChars = true;
    std::optional<bool> stripAccents; // unset: follows lowercase, as in the original BERT
    bool lowercase = true;
};

class BertNormalizer final : public Normalizer {
public:
    explicit BertNormalizer(BertNormalizerOptions options)
        : options_(options) {}
    void normalize(NormalizedText& text) const override;

private:
    BertNormalizerOptions options_;
};

class LowercaseNormalizer final : public Normalizer {
public:
    void normalize(NormalizedText& text) const override;
};

class UnicodeNormalizer final : public Normalizer {
public:
    explicit UnicodeNormalizer(NormalForm form)
        : form_(form) {}
    void normalize(NormalizedText& text) const override;

private:
    NormalForm form_;
};

// Removes non-spacing marks (meant to follow NFD or NFKD).
class StripAccentsNormalizer final : public Normalizer {
public:
    void normalize(NormalizedText& text) const override;
};

class PrependNormalizer final : public Normalizer {
public:
    explicit PrependNormalizer(std::u32string prefix)
        : prefix_(std::move(prefix)) {}
    void normalize(NormalizedText& text) const override;

private:
    std::u32string prefix_;
};

class ReplaceNormalizer final : public Normalizer {
public:
    ReplaceNormalizer(Pattern pattern, std::u32string content)
        : pattern_(std::move(pattern))
        , content_(std::move(content)) {}
    void normalize(NormalizedText& text) const override;

private:
    Pattern pattern_;
    std::u32string content_;
};

class NormalizerSequence final : public Normalizer {
public:
    explicit NormalizerSequence(std::vector<std::unique_ptr<Normalizer>> steps)
        : steps_(std::move(steps)) {}
    void normalize(NormalizedText& text) const override;

private:
    std::vector<std::unique_ptr<Normalizer>> steps_;
};
} // namespace headlight::tokenize
