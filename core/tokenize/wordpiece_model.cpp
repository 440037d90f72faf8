#include "wordpiece_model.h"

#include "tokenizer.h"
#include "unicode_text.h"

namespace headlight::tokenize {

std::vector<PieceToken> WordPieceModel::tokenize(std::u32string_view word) const {
    const int length = static_cast<int>(word.size());
    if (length > options_.maxInputCharsPerWord) return unknownWord(length);
    std::vector<PieceToken> pieces;
    for (int begin = 0; begin < length;) {
        const std::string prefix = begin > 0 ? options_.continuingSubwordPrefix : std::string();
        std::optional<PieceToken> longest;
        for (int end = length; end > begin && !longest; --end) {
            std::string candidate = prefix + encodeUtf8(word.substr(begin, end - begin));
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
