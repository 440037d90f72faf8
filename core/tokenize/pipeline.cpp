#include "pipeline.h"

#include "unicode_text.h"

namespace headlight::tokenize {
namespace {

void appendPiece(Encoding& encoding, const Piece& piece, int typeId) {
    for (const PieceToken& token : *piece.tokens) {
        const Span source = piece.text.originalSpan(token.span);
        encoding.ids.push_back(token.id);
        encoding.typeIds.push_back(typeId);
        encoding.tokens.push_back(token.value);
        encoding.offsets.push_back({source.begin, source.end});
    }
}
} // namespace

PipelineTokenizer::PipelineTokenizer(PipelineParts parts)
    : parts_(std::move(parts))
    , added_(parts_.addedTokens, parts_.normalizer.get()) {}

Encoding PipelineTokenizer::encode(const std::string& text, const std::optional<std::string>& pair,
                                   bool addSpecialTokens) const {
    std::vector<Encoding> sequences{encodeSequence(text, 0)};
    if (pair) sequences.push_back(encodeSequence(*pair, 1));
    if (parts_.postProcessor)
        sequences = parts_.postProcessor->process(std::move(sequences), addSpecialTokens);
    Encoding merged;
    for (const Encoding& sequence : sequences)
        appendEncoding(merged, sequence);
    return merged;
}

Encoding PipelineTokenizer::encodeSequence(const std::string& text, int typeId) const {
    PreTokenizedText pieces = added_.extractAndNormalize(decodeUtf8(text), parts_.normalizer.get());
    if (parts_.preTokenizer) parts_.preTokenizer->preTokenize(pieces);
    Encoding encoding;
    for (Piece& piece : pieces.pieces()) {
        if (!piece.tokens) piece.tokens = parts_.model->tokenize(piece.text.chars());
        appendPiece(encoding, piece, typeId);
    }
    return encoding;
}

int PipelineTokenizer::vocabSize() const {
    const Vocab& vocab = parts_.model->vocab();
    int size = vocab.size();
    for (const AddedToken& token : parts_.addedTokens)
        if (!vocab.idOf(token.content)) ++size;
    return size;
}

std::string PipelineTokenizer::tokenString(int id) const {
    if (const auto added = added_.tokenOf(id)) return *added;
    return parts_.model->vocab().tokenOf(id);
}
} // namespace headlight::tokenize
