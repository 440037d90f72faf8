#pragma once
// The model stage: turns one pre-tokenized word into vocabulary tokens (BPE or WordPiece), and the
// vocabulary both share.

#include "pre_tokenized_text.h"

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace headlight::tokenize {

// Hostile files must not exhaust memory: no vocabulary, merge list or id is allowed past this.
constexpr int kMaxVocabEntries = 10'000'000;

class Vocab {
public:
    // Later duplicates win for token -> id, as in a Python dict or a Rust HashMap.
    void add(std::string token, int id);
    std::optional<int> idOf(const std::string& token) const;
    std::string tokenOf(int id) const; // "" when unknown
    int size() const { return static_cast<int>(ids_.size()); }
    // The longest token's UTF-8 length: no longer candidate can be in the vocabulary.
    std::size_t longestTokenBytes() const { return longest_; }

private:
    std::size_t longest_ = 0;
    std::unordered_map<std::string, int> ids_;
    std::unordered_map<int, std::string> tokens_;
};

class Model {
public:
    virtual ~Model() = default;
    // `word` is one pre-tokenized piece, never empty.
    virtual std::vector<PieceToken> tokenize(std::u32string_view word) const = 0;
    virtual const Vocab& vocab() const = 0;
};
} // namespace headlight::tokenize
