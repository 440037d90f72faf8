#include "pre_tokenized_text.h"

namespace headlight::tokenize {

void PreTokenizedText::splitWithTokens(
    const std::function<std::vector<Piece>(NormalizedText)>& cut) {
    std::vector<Piece> result;
    result.reserve(pieces_.size());
    for (Piece& piece : pieces_) {
        if (piece.tokens) {
            result.push_back(std::move(piece));
            continue;
        }
        for (Piece& part : cut(std::move(piece.text)))
            if (!part.text.empty()) result.push_back(std::move(part));
    }
    pieces_ = std::move(result);
}

void PreTokenizedText::split(
    const std::function<std::vector<NormalizedText>(NormalizedText)>& cut) {
    splitWithTokens([&](NormalizedText text) {
        std::vector<Piece> parts;
        for (NormalizedText& part : cut(std::move(text)))
            parts.push_back({std::move(part), {}});
        return parts;
    });
}

void PreTokenizedText::normalize(const std::function<void(NormalizedText&)>& edit) {
    for (Piece& piece : pieces_)
        if (!piece.tokens) edit(piece.text);
}
} // namespace headlight::tokenize
