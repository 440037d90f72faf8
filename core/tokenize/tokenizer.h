#pragma once
// Tokenizers that reproduce Hugging Face's output for a checkpoint folder, loaded from whichever
// files the folder has: tokenizer.json (Hugging Face tokenizers format: BPE, including Llama-style
// byte-fallback BPE, and WordPiece), else vocab.txt (BERT WordPiece), else vocab.json + merges.txt
// (GPT-2 byte-level BPE). Options that HF reads from tokenizer_config.json / config.json
// (do_lower_case, strip_accents, tokenize_chinese_chars, special tokens) are honoured.

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace headlight::tokenize {

class TokenizerError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Encoding {
    std::vector<int> ids;
    std::vector<int> typeIds;           // 0 for the first text, 1 for the pair (BERT-style)
    std::vector<std::string> tokens;    // token strings as the vocabulary spells them (UTF-8)
    std::vector<std::pair<int, int>> offsets; // [begin, end) in Unicode code points of the source
                                              // text (of the pair for typeIds 1); {0, 0} for
                                              // special tokens, as HF's offset_mapping
};

class Tokenizer {
public:
    virtual ~Tokenizer() = default;
    // Throws TokenizerError naming the file and the problem, or saying which files are missing.
    static std::unique_ptr<Tokenizer> load(const std::string& folder);

    // As HF's tokenizer(text, text_pair, add_special_tokens=...). Throws TokenizerError on invalid
    // UTF-8.
    virtual Encoding encode(const std::string& text, const std::optional<std::string>& pair = std::nullopt,
                            bool addSpecialTokens = true) const = 0;
    virtual int vocabSize() const = 0;
    virtual std::string tokenString(int id) const = 0; // "" when out of range
    virtual std::string kind() const = 0;              // "wordpiece", "byte-level-bpe", "bpe"
};
} // namespace headlight::tokenize
