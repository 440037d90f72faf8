#include "post_processors.h"

#include "pre_tokenizers.h"
#include "unicode_text.h"

namespace headlight::tokenize {
namespace {

Encoding specialTokens(const std::vector<int>& ids, const std::vector<std::string>& tokens,
                       int typeId) {
    Encoding encoding;
    encoding.ids = ids;
    encoding.tokens = tokens;
    encoding.typeIds.assign(ids.size(), typeId);
    encoding.offsets.assign(ids.size(), {0, 0});
    return encoding;
}

Encoding special(const NamedToken& token, int typeId) {
    return specialTokens({token.id}, {token.token}, typeId);
}

Encoding surround(const Encoding* before, const Encoding& sequence, const Encoding& after) {
    Encoding result;
    if (before) appendEncoding(result, *before);
    appendEncoding(result, sequence);
    appendEncoding(result, after);
    return result;
}

int countSpaces(const std::u32string& token, bool fromFront) {
    const auto isSpace = [](char32_t c) { return c == byteLevelChar(' ') || isWhitespace(c); };
    int count = 0;
    const int length = static_cast<int>(token.size());
    while (count < length && isSpace(token[fromFront ? count : length - 1 - count]))
        ++count;
    return count;
}

// HF's process_offsets: byte-level tokens carry their leading space ("Ġword"); the offsets leave
// it out, except the one space added by add_prefix_space in front of the first token.
void trimByteLevelOffsets(Encoding& encoding, bool addPrefixSpace) {
    for (size_t i = 0; i < encoding.tokens.size(); ++i) {
        const std::u32string token = decodeUtf8(encoding.tokens[i]);
        int leading = countSpaces(token, true);
        const int trailing = countSpaces(token, false);
        auto& [begin, end] = encoding.offsets[i];
        const bool isFirst = i == 0 || begin == 0;
        if (leading > 0 && isFirst && addPrefixSpace && leading == 1) leading = 0;
        if (leading > 0) begin = std::min(begin + leading, end);
        if (trailing > 0 && end >= trailing) end = std::max(end - trailing, begin);
    }
}
} // namespace

void appendEncoding(Encoding& to, const Encoding& from) {
    to.ids.insert(to.ids.end(), from.ids.begin(), from.ids.end());
    to.typeIds.insert(to.typeIds.end(), from.typeIds.begin(), from.typeIds.end());
    to.tokens.insert(to.tokens.end(), from.tokens.begin(), from.tokens.end());
    to.offsets.insert(to.offsets.end(), from.offsets.begin(), from.offsets.end());
}

TemplateProcessing::TemplateProcessing(std::vector<TemplatePiece> single,
                                       std::vector<TemplatePiece> pair,
                                       std::map<std::string, SpecialTokenIds> specialTokens)
    : single_(std::move(single))
    , pair_(std::move(pair))
    , specialTokens_(std::move(specialTokens)) {
    for (const auto* pieces : {&single_, &pair_})
        for (const TemplatePiece& piece : *pieces)
            if (!piece.isSequence && !specialTokens_.count(piece.specialToken))
                throw TokenizerError("TemplateProcessing uses the special token '" +
                                     piece.specialToken +
                                     "', which its special_tokens do not define");
}

std::vector<Encoding> TemplateProcessing::process(std::vector<Encoding> encodings,
                                                  bool addSpecialTokens) const {
    std::vector<Encoding> result;
    for (const TemplatePiece& piece : encodings.size() == 2 ? pair_ : single_) {
        if (piece.isSequence) {
            Encoding sequence = encodings[std::min<size_t>(piece.sequence, encodings.size() - 1)];
            sequence.typeIds.assign(sequence.ids.size(), piece.typeId);
            result.push_back(std::move(sequence));
        } else if (addSpecialTokens) {
            const SpecialTokenIds& token = specialTokens_.at(piece.specialToken);
            result.push_back(specialTokens(token.ids, token.tokens, piece.typeId));
        }
    }
    return result;
}

std::vector<Encoding> BertProcessing::process(std::vector<Encoding> encodings,
                                              bool addSpecialTokens) const {
    if (!addSpecialTokens) return encodings;
    const Encoding cls = special(cls_, 0);
    std::vector<Encoding> result{surround(&cls, encodings[0], special(sep_, 0))};
    if (encodings.size() > 1) result.push_back(surround(nullptr, encodings[1], special(sep_, 1)));
    return result;
}

std::vector<Encoding> RobertaProcessing::process(std::vector<Encoding> encodings,
                                                 bool addSpecialTokens) const {
    for (Encoding& encoding : encodings) {
        if (trimOffsets_) trimByteLevelOffsets(encoding, addPrefixSpace_);
        encoding.typeIds.assign(encoding.ids.size(), 0);
    }
    if (!addSpecialTokens) return encodings;
    const Encoding cls = special(cls_, 0);
    const Encoding sep = special(sep_, 0);
    std::vector<Encoding> result{surround(&cls, encodings[0], sep)};
    if (encodings.size() > 1) result.push_back(surround(&sep, encodings[1], sep));
    return result;
}

std::vector<Encoding> ByteLevelProcessing::process(std::vector<Encoding> encodings, bool) const {
    if (trimOffsets_)
        for (Encoding& encoding : encodings)
            trimByteLevelOffsets(encoding, addPrefixSpace_);
    return encodings;
}

std::vector<Encoding> PostProcessorSequence::process(std::vector<Encoding> encodings,
                                                     bool addSpecialTokens) const {
    for (const auto& step : steps_)
        encodings = step->process(std::move(encodings), addSpecialTokens);
    return encodings;
}
} // namespace headlight::tokenize
