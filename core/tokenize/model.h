#pragma once
// The model stage: turns one pre-tokenized word into vocabulary tokens (BPE or WordPiece), and the
// vocabulary both share.

#include "flat_index.h"
#include "pre_tokenized_text.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headlight::tokenize {

// Hostile files must not exhaust memory: no vocabulary, merge list or id is allowed past this.
constexpr int kMaxVocabEntries = 10'000'000;

// Every token's text back to back in one buffer, found by token and by id through two flat hash
// indices (flat_index.h says why).
class Vocab {
public:
    void reserve(std::size_t tokens, std::size_t textBytes);
    // Later duplicates win for token -> id, as in a Python dict or a Rust HashMap.
    void add(std::string_view token, int id);
    std::optional<int> idOf(std::string_view token) const;
    std::string tokenOf(int id) const; // "" when unknown
    int size() const { return static_cast<int>(entries_.size()); }
    // The longest token's UTF-8 length: no longer candidate can be in the vocabulary.
    std::size_t longestTokenBytes() const { return longest_; }

private:
    struct Entry {
        uint32_t offset; // in text_ (files are under 256 MiB)
        uint32_t length;
        int id;
    };
    std::string_view textOf(int entry) const;
    std::size_t hashOfEntry(int entry) const;
    std::size_t hashOfId(int entry) const;

    std::size_t longest_ = 0;
    std::string text_;
    std::vector<Entry> entries_;
    FlatIndex byToken_;
    FlatIndex byId_; // may keep a stale slot for an id a later duplicate took over; never matched
};

class Model {
public:
    virtual ~Model() = default;
    // `word` is one pre-tokenized piece, never empty.
    virtual std::vector<PieceToken> tokenize(std::u32string_view word) const = 0;
    virtual const Vocab& vocab() const = 0;
};
} // namespace headlight::tokenize
