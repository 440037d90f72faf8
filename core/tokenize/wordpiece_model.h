#pragma once
// WordPiece as BERT's: greedy longest-match-first, continuation pieces spelled with a prefix
// ("##"); a word longer than max_input_chars_per_word, or with a part no piece covers, becomes the
// single unknown token.

#include "model.h"

#include <string>

namespace headlight::tokenize {

struct WordPieceOptions {
    std::string unkToken = "[UNK]";
    std::string continuingSubwordPrefix = "##";
    int maxInputCharsPerWord = 100;
};

class WordPieceModel final : public Model {
public:
    WordPieceModel(Vocab vocab, WordPieceOptions options)
        : vocab_(std::move(vocab))
        , options_(std::move(options)) {}
    std::vector<PieceToken> tokenize(std::u32string_view word) const override;
    const Vocab& vocab() const override { return vocab_; }

private:
    std::vector<PieceToken> unknownWord(int length) const;

    Vocab vocab_;
    WordPieceOptions options_;
};
} // namespace headlight::tokenize
