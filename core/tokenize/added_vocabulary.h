#pragma once
// Added tokens (special tokens such as [CLS] or <|endoftext|>, and tokens added after training):
// they are cut out of the text before the model sees it, as HF's AddedVocabulary does. Tokens
// with normalized=false are found in the raw text, the others in the normalized pieces; at each
// position the longest token wins, and single_word / lstrip / rstrip are honoured.

#include "normalizers.h"
#include "pre_tokenized_text.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace headlight::tokenize {

struct AddedToken {
    std::string content; // UTF-8
    int id = 0;
    bool singleWord = false;
    bool lstrip = false;
    bool rstrip = false;
    bool normalized = false;
    bool special = true;
};

class AddedVocabulary {
public:
    AddedVocabulary() = default;
    // `normalizer` (may be null) gives the form normalized tokens are searched in.
    AddedVocabulary(const std::vector<AddedToken>& tokens, const Normalizer* normalizer);

    // The text cut at every added token, the other pieces normalized.
    PreTokenizedText extractAndNormalize(const std::u32string& text,
                                         const Normalizer* normalizer) const;
    std::optional<std::string> tokenOf(int id) const;

private:
    struct Entry {
        std::u32string pattern;
        int id;
        bool singleWord, lstrip, rstrip;
    };
    // Entries by first character, longest pattern first.
    using Index = std::unordered_map<char32_t, std::vector<Entry>>;

    std::vector<Piece> splitAtTokens(NormalizedText text, const Index& index) const;
    static const Entry* longestAt(const std::u32string& text, size_t at, const Index& index);

    Index raw_;
    Index normalized_;
    std::unordered_map<int, std::string> contents_;
};
} // namespace headlight::tokenize
