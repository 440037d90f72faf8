#pragma once
// What Split, Replace and the pre-tokenizers search for (HF's Pattern trait): a character class, a
// literal string, or a regular expression written for Oniguruma, and the five ways to cut a text
// at the matches (HF's SplitDelimiterBehavior).

#include "normalized_text.h"

#include <QRegularExpression>
#include <functional>
#include <string>
#include <vector>

namespace headlight::tokenize {

struct PatternMatch {
    Span span;
    bool isMatch;
};
// Covers the whole text, in order; empty text gives one empty non-match.
using Matches = std::vector<PatternMatch>;

class Pattern {
public:
    static Pattern characters(std::function<bool(char32_t)> predicate); // each character alone
    static Pattern literal(std::u32string text);
    // Throws TokenizerError when PCRE2 rejects the expression.
    static Pattern regex(const std::string& expression);

    Matches find(std::u32string_view text) const;
    std::vector<Span> matchedSpans(std::u32string_view text) const;

private:
    Matches findCharacters(std::u32string_view text) const;
    Matches findLiteral(std::u32string_view text) const;
    Matches findRegex(std::u32string_view text) const;

    std::function<bool(char32_t)> predicate_;
    std::u32string literal_;
    QRegularExpression regex_;
};

Matches invertMatches(Matches matches);

enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

// HF's NormalizedString::split: the pieces to keep, empty ones included.
std::vector<NormalizedText> splitText(const NormalizedText& text, const Matches& matches,
                                      SplitBehavior behavior);
} // namespace headlight::tokenize
