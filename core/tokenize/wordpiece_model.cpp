#include "wordpiece_model.h"

#include "tokenizer.h"
#include "unicode_text.h"

#include <algorithm>

namespace headlight::tokenize {

// Why candidates are byte ranges of the word's UTF-8, starting no longer than the vocabulary's
// longest token: re-encoding every candidate from the longest down made a word cubic in its
// length, and tokenizer.json may raise max_input_chars_per_word to INT_MAX, so one long word in a
// hostile folder took minutes (2,000 characters: 7.6 s). The pieces found are the same: a
// candidate longer than every token cannot match.
std::vector<PieceToken> WordPieceModel::tokenize(std::u32string_view word) const {
    const int length = static_cast<int>(word.size());
    if (length > options_.maxInputCharsPerWord) return unknownWord(length);
    const std::string utf8 = encodeUtf8(word);
    std::vector<std::size_t> offsets(static_cast<std::size_t>(length) + 1, 0); // of each character
    for (int i = 0; i < length; ++i)
        offsets[std::size_t(i) + 1] =
            offsets[std::size_t(i)] + encodeUtf8(word.substr(std::size_t(i), 1)).size();
    std::vector<PieceToken> pieces;
    for (int begin = 0; begin < length;) {
        const std::string prefix = begin > 0 ? options_.continuingSubwordPrefix : std::string();
        std::optional<PieceToken> longest;
        const std::size_t from = offsets[std::size_t(begin)];
        const std::size_t room = vocab_.longestTokenBytes() >= prefix.size()
                                     ? vocab_.longestTokenBytes() - prefix.size()
                                     : 0;
        // The last character whose end still fits in `room` bytes after `begin`.
        const int fits =
            int(std::upper_bound(offsets.begin(), offsets.end(), from + room) - offsets.begin()) -
            1;
        for (int end = std::min(length, fits); end > begin && !longest; --end) {
            std::string candidate = prefix + utf8.substr(from, offsets[std::size_t(end)] - from);
            if (const auto id = vocab_.idOf(candidate))
                longest = PieceToken{*id, std::move(candidate), {begin, end}};
        }
        if (!longest) return unknownWord(length);
        begin = longest->span.end;
        pieces.push_back(std::move(*longest));
    }
    return pieces;
}

std::vector<PieceToken> WordPieceModel::unknownWord(int length) const {
    const auto id = vocab_.idOf(options_.unkToken);
    if (!id)
        throw TokenizerError("the WordPiece unknown token '" + options_.unkToken +
                             "' is not in the vocabulary");
    return {{*id, options_.unkToken, {0, length}}};
}
} // namespace headlight::tokenize
