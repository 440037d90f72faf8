#include "pre_tokenizers.h"

#include "unicode_text.h"

#include <array>

namespace headlight::tokenize {
namespace {

std::array<char32_t, 256> makeByteLevelAlphabet() {
    std::array<char32_t, 256> alphabet{};
    char32_t next = 256;
    for (int byte = 0; byte < 256; ++byte) {
        const bool printable =
            (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
        alphabet[byte] = printable ? char32_t(byte) : next++;
    }
    return alphabet;
}

std::u32string byteLevelSpelling(char32_t c) {
    std::string bytes;
    appendUtf8(bytes, c);
    std::u32string spelled;
    for (char byte : bytes)
        spelled.push_back(byteLevelChar(static_cast<unsigned char>(byte)));
    return spelled;
}

std::vector<NormalizedText> splitOn(const NormalizedText& text, const Pattern& pattern,
                                    SplitBehavior behavior) {
    return splitText(text, pattern.find(text.chars()), behavior);
}

// GPT-2's pre-split: contractions, letters, digits, other symbols, each with one optional
// leading space, and whitespace runs that leave their last space to the next word.
constexpr const char* kGpt2SplitRegex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
} // namespace

char32_t byteLevelChar(unsigned char byte) {
    static const std::array<char32_t, 256> alphabet = makeByteLevelAlphabet();
    return alphabet[byte];
}

ByteLevelPreTokenizer::ByteLevelPreTokenizer(bool addPrefixSpace, bool useRegex)
    : addPrefixSpace_(addPrefixSpace)
    , useRegex_(useRegex)
    , regex_(Pattern::regex(kGpt2SplitRegex)) {}

void ByteLevelPreTokenizer::preTokenize(PreTokenizedText& text) const {
    text.split([&](NormalizedText piece) {
        if (addPrefixSpace_ && !piece.empty() && piece.chars().front() != U' ') piece.prepend(U" ");
        if (!useRegex_) return std::vector<NormalizedText>{std::move(piece)};
        return splitOn(piece, regex_, SplitBehavior::Isolated);
    });
    text.normalize([](NormalizedText& piece) { piece.expandEach(byteLevelSpelling); });
}

void MetaspacePreTokenizer::preTokenize(PreTokenizedText& text) const {
    const std::u32string replacement(1, replacement_);
    text.split([&](NormalizedText piece) {
        piece.replace(Pattern::literal(U" ").matchedSpans(piece.chars()), replacement);
        const bool startsWithReplacement = !piece.empty() && piece.chars().front() == replacement_;
        const bool prepend = scheme_ == PrependScheme::Always ||
                             (scheme_ == PrependScheme::First && piece.originalBegin() == 0);
        if (prepend && !startsWithReplacement) piece.prepend(replacement);
        if (!split_) return std::vector<NormalizedText>{std::move(piece)};
        const char32_t marker = replacement_;
        return splitOn(piece, Pattern::characters([marker](char32_t c) { return c == marker; }),
                       SplitBehavior::MergedWithNext);
    });
}

void SplitPreTokenizer::preTokenize(PreTokenizedText& text) const {
    text.split([&](NormalizedText piece) {
        Matches matches = pattern_.find(piece.chars());
        return splitText(piece, invert_ ? invertMatches(std::move(matches)) : matches, behavior_);
    });
}

void BertPreTokenizer::preTokenize(PreTokenizedText& text) const {
    static const Pattern whitespace = Pattern::characters(isWhitespace);
    static const Pattern punctuation = Pattern::characters(isBertPunctuation);
    text.split(
        [](NormalizedText piece) { return splitOn(piece, whitespace, SplitBehavior::Removed); });
    text.split(
        [](NormalizedText piece) { return splitOn(piece, punctuation, SplitBehavior::Isolated); });
}

void WhitespacePreTokenizer::preTokenize(PreTokenizedText& text) const {
    text.split([](NormalizedText piece) {
        // 0: whitespace, 1: word character, 2: anything else; runs of 1 or 2 are the words.
        const auto classOf = [](char32_t c) { return isWordChar(c) ? 1 : isWhitespace(c) ? 0 : 2; };
        std::vector<NormalizedText> words;
        const std::u32string& chars = piece.chars();
        for (int begin = 0; begin < piece.size();) {
            const int kind = classOf(chars[begin]);
            int end = begin + 1;
            while (end < piece.size() && classOf(chars[end]) == kind)
                ++end;
            if (kind != 0) words.push_back(piece.slice({begin, end}));
            begin = end;
        }
        return words;
    });
}

void WhitespaceSplitPreTokenizer::preTokenize(PreTokenizedText& text) const {
    static const Pattern whitespace = Pattern::characters(isWhitespace);
    text.split(
        [](NormalizedText piece) { return splitOn(piece, whitespace, SplitBehavior::Removed); });
}

void PreTokenizerSequence::preTokenize(PreTokenizedText& text) const {
    for (const auto& step : steps_)
        step->preTokenize(text);
}
} // namespace headlight::tokenize
