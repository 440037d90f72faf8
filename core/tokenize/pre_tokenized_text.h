#pragma once
// Hugging Face's PreTokenizedString: the text cut into pieces, each still carrying its alignment
// to the source; a piece that is already tokenized (an added token) is left alone by the later
// stages.

#include "normalized_text.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace headlight::tokenize {

struct PieceToken {
    int id;
    std::string value; // UTF-8
    Span span;         // normalized characters of the piece it came from
};

struct Piece {
    NormalizedText text;
    std::optional<std::vector<PieceToken>> tokens;
};

class PreTokenizedText {
public:
    explicit PreTokenizedText(NormalizedText whole) { pieces_.push_back({std::move(whole), {}}); }

    // Replaces every piece not yet tokenized by the pieces `cut` returns; empty ones are dropped.
    void splitWithTokens(const std::function<std::vector<Piece>(NormalizedText)>& cut);
    void split(const std::function<std::vector<NormalizedText>(NormalizedText)>& cut);
    void normalize(const std::function<void(NormalizedText&)>& edit);
    std::vector<Piece>& pieces() { return pieces_; }

private:
    std::vector<Piece> pieces_;
};
} // namespace headlight::tokenize
