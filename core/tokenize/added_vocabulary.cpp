#include "added_vocabulary.h"

#include "unicode_text.h"

#include <algorithm>

namespace headlight::tokenize {

AddedVocabulary::AddedVocabulary(const std::vector<AddedToken>& tokens,
                                 const Normalizer* normalizer) {
    for (const AddedToken& token : tokens) {
        if (token.content.empty()) continue;
        NormalizedText pattern(decodeUtf8(token.content));
        if (token.normalized && normalizer) normalizer->normalize(pattern);
        if (pattern.empty()) continue;
        Index& index = token.normalized ? normalized_ : raw_;
        index[pattern.chars().front()].push_back(
            {pattern.chars(), token.id, token.singleWord, token.lstrip, token.rstrip});
        contents_[token.id] = token.content;
    }
    for (Index* index : {&raw_, &normalized_})
        for (auto& [first, entries] : *index)
            std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
                return a.pattern.size() > b.pattern.size();
            });
}

PreTokenizedText AddedVocabulary::extractAndNormalize(const std::u32string& text,
                                                      const Normalizer* normalizer) const {
    PreTokenizedText result{NormalizedText(text)};
    result.splitWithTokens(
        [&](NormalizedText piece) { return splitAtTokens(std::move(piece), raw_); });
    result.splitWithTokens([&](NormalizedText piece) {
        if (normalizer) normalizer->normalize(piece);
        return splitAtTokens(std::move(piece), normalized_);
    });
    return result;
}

std::optional<std::string> AddedVocabulary::tokenOf(int id) const {
    const auto found = contents_.find(id);
    if (found == contents_.end()) return std::nullopt;
    return found->second;
}

const AddedVocabulary::Entry* AddedVocabulary::longestAt(const std::u32string& text, size_t at,
                                                         const Index& index) {
    const auto candidates = index.find(text[at]);
    if (candidates == index.end()) return nullptr;
    for (const Entry& entry : candidates->second)
        if (text.compare(at, entry.pattern.size(), entry.pattern) == 0) return &entry;
    return nullptr;
}

// HF's AddedVocabulary::find_matches followed by split_with_indices.
std::vector<Piece> AddedVocabulary::splitAtTokens(NormalizedText text, const Index& index) const {
    const std::u32string& chars = text.chars();
    const int length = text.size();
    std::vector<Piece> pieces;
    int keptUntil = 0; // end of the last piece emitted
    for (int at = 0; at < length;) {
        const Entry* entry = index.empty() ? nullptr : longestAt(chars, at, index);
        if (!entry) {
            ++at;
            continue;
        }
        int begin = at;
        int end = at + static_cast<int>(entry->pattern.size());
        at = end;
        const bool wordBefore = begin > 0 && isWordChar(chars[begin - 1]);
        const bool wordAfter = end < length && isWordChar(chars[end]);
        if (entry->singleWord && (wordBefore || wordAfter)) continue;
        if (entry->lstrip) {
            while (begin > keptUntil && isWhitespace(chars[begin - 1]))
                --begin;
        }
        if (entry->rstrip) {
            while (end < length && isWhitespace(chars[end]))
                ++end;
        }
        if (keptUntil < begin) pieces.push_back({text.slice({keptUntil, begin}), {}});
        NormalizedText token = text.slice({begin, end});
        PieceToken value{entry->id, encodeUtf8(token.chars()), {0, token.size()}};
        pieces.push_back({std::move(token), std::vector<PieceToken>{std::move(value)}});
        keptUntil = end;
    }
    if (keptUntil < length || pieces.empty())
        pieces.push_back({text.slice({keptUntil, length}), {}});
    return pieces;
}
} // namespace headlight::tokenize
