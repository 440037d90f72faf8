#pragma once
// Byte-pair encoding as Hugging Face's tokenizers BPE model: a word starts as one symbol per
// character (bytes <0xNN> when byte_fallback is on and the character is unknown, [UNK] otherwise,
// fused when fuse_unk), then the adjacent pair with the lowest merge rank is merged until none is
// left, the leftmost pair first among equal ranks.

#include "model.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace headlight::tokenize {

// Merges in rank order, as pairs of token texts (views into the parsed file).
using MergeList = std::vector<std::pair<std::string_view, std::string_view>>;

struct BpeOptions {
    std::optional<std::string> unkToken;
    std::string continuingSubwordPrefix;
    std::string endOfWordSuffix;
    bool fuseUnk = false;
    bool byteFallback = false;
    bool ignoreMerges = false; // a word that is a vocabulary token is taken whole
};

class BpeModel final : public Model {
public:
    // Throws TokenizerError when a merge names a token the vocabulary lacks (`mergeSource` says
    // where the merges came from, e.g. "merges.txt line").
    BpeModel(Vocab vocab, const MergeList& merges, BpeOptions options,
             const std::string& mergeSource);
    std::vector<PieceToken> tokenize(std::u32string_view word) const override;
    const Vocab& vocab() const override { return vocab_; }

private:
    struct Merge { // its rank is its place in merges_
        int left;
        int right;
        int newId;
    };
    struct Symbol {
        int id;
        Span span;
        int prev;
        int next;
        bool removed = false;
    };

    std::vector<Symbol> initialSymbols(std::u32string_view word) const;
    void addCharacter(std::vector<Symbol>& symbols, std::optional<Symbol>& pendingUnk,
                      std::string piece, int index) const;
    void mergeAll(std::vector<Symbol>& symbols) const;
    void addMerge(std::string_view left, std::string_view right, std::string& merged, int rank,
                  const std::string& mergeSource);
    int findMerge(int left, int right) const; // its rank, or -1
    int unkId() const;

    Vocab vocab_;
    std::vector<Merge> merges_;
    FlatIndex mergeIndex_; // (left, right) -> rank; a later duplicate wins, as in HF
    BpeOptions options_;
};
} // namespace headlight::tokenize
