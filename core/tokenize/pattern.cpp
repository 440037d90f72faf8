#include "pattern.h"

#include "tokenizer.h"
#include "unicode_text.h"

#include <QString>
#include <algorithm>

namespace headlight::tokenize {
namespace {

// Oniguruma's \s is Unicode White_Space; PCRE2's misses U+0085, so \s is spelled out.
constexpr const char* kWhitespaceClass =
    "\\t-\\r\\x20\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}"
    "\\x{3000}";

std::string spellOutWhitespace(const std::string& expression) {
    std::string out;
    bool inClass = false;
    for (size_t i = 0; i < expression.size(); ++i) {
        const char c = expression[i];
        if (c == '\\' && i + 1 < expression.size()) {
            const char escaped = expression[++i];
            if (escaped == 's')
                out += inClass ? std::string(kWhitespaceClass)
                               : "[" + std::string(kWhitespaceClass) + "]";
            else if (escaped == 'S' && !inClass)
                out += "[^" + std::string(kWhitespaceClass) + "]";
            else
                out += {c, escaped};
            continue;
        }
        if (c == '[' && !inClass) {
            inClass = true;
            out += c;
            // A ']' right after '[' or '[^' is a literal member, not the end of the class.
            if (i + 1 < expression.size() && expression[i + 1] == '^') out += expression[++i];
            if (i + 1 < expression.size() && expression[i + 1] == ']') out += expression[++i];
            continue;
        }
        if (c == ']' && inClass) inClass = false;
        out += c;
    }
    return out;
}

// Index of every UTF-16 unit boundary in code points, so regex offsets map back to characters.
std::vector<int> utf16ToCodePoints(std::u32string_view text) {
    std::vector<int> map;
    map.reserve(text.size() + 1);
    for (size_t i = 0; i < text.size(); ++i) {
        map.push_back(static_cast<int>(i));
        if (text[i] > 0xFFFF) map.push_back(static_cast<int>(i));
    }
    map.push_back(static_cast<int>(text.size()));
    return map;
}

Matches fromMatchedSpans(const std::vector<Span>& spans, int length) {
    if (length == 0) return {{{0, 0}, false}};
    Matches matches;
    int previous = 0;
    for (const Span& span : spans) {
        if (previous < span.begin) matches.push_back({{previous, span.begin}, false});
        matches.push_back({span, true});
        previous = span.end;
    }
    if (previous < length) matches.push_back({{previous, length}, false});
    return matches;
}
} // namespace

Pattern Pattern::characters(std::function<bool(char32_t)> predicate) {
    Pattern pattern;
    pattern.predicate_ = std::move(predicate);
    return pattern;
}

Pattern Pattern::literal(std::u32string text) {
    Pattern pattern;
    pattern.literal_ = std::move(text);
    return pattern;
}

Pattern Pattern::regex(const std::string& expression) {
    Pattern pattern;
    pattern.regex_ = QRegularExpression(QString::fromStdString(spellOutWhitespace(expression)),
                                        QRegularExpression::UseUnicodePropertiesOption);
    if (!pattern.regex_.isValid())
        throw TokenizerError("invalid regular expression '" + expression +
                             "': " + pattern.regex_.errorString().toStdString());
    return pattern;
}

Matches Pattern::find(std::u32string_view text) const {
    if (predicate_) return findCharacters(text);
    if (!regex_.pattern().isEmpty()) return findRegex(text);
    return findLiteral(text);
}

std::vector<Span> Pattern::matchedSpans(std::u32string_view text) const {
    std::vector<Span> spans;
    for (const PatternMatch& match : find(text))
        if (match.isMatch) spans.push_back(match.span);
    return spans;
}

Matches Pattern::findCharacters(std::u32string_view text) const {
    std::vector<Span> spans;
    for (int i = 0; i < static_cast<int>(text.size()); ++i)
        if (predicate_(text[i])) spans.push_back({i, i + 1});
    return fromMatchedSpans(spans, static_cast<int>(text.size()));
}

Matches Pattern::findLiteral(std::u32string_view text) const {
    // HF: an empty literal matches nothing.
    std::vector<Span> spans;
    if (!literal_.empty()) {
        for (size_t at = text.find(literal_); at != std::u32string_view::npos;
             at = text.find(literal_, at + literal_.size()))
            spans.push_back({static_cast<int>(at), static_cast<int>(at + literal_.size())});
    }
    return fromMatchedSpans(spans, static_cast<int>(text.size()));
}

Matches Pattern::findRegex(std::u32string_view text) const {
    const QString subject = QString::fromUcs4(text.data(), static_cast<qsizetype>(text.size()));
    const std::vector<int> toCodePoint = utf16ToCodePoints(text);
    std::vector<Span> spans;
    QRegularExpressionMatchIterator it = regex_.globalMatch(subject);
    while (it.hasNext()) {
        const QRegularExpressionMatch match = it.next();
        // Empty matches would only yield empty pieces, which every caller drops.
        if (match.capturedLength() == 0) continue;
        spans.push_back({toCodePoint[match.capturedStart()], toCodePoint[match.capturedEnd()]});
    }
    return fromMatchedSpans(spans, static_cast<int>(text.size()));
}

Matches invertMatches(Matches matches) {
    for (PatternMatch& match : matches)
        match.isMatch = !match.isMatch;
    return matches;
}

namespace {

struct Cut {
    Span span;
    bool dropped;
};
using Cuts = std::vector<Cut>;

// MergedWithPrevious: a match directly after a kept piece joins it. MergedWithNext is the same
// walk from the end, joining the piece that follows.
Cuts mergedCuts(const Matches& matches, bool withPrevious) {
    Cuts cuts;
    bool previousMatched = false;
    const auto visit = [&](const PatternMatch& match) {
        if (match.isMatch && !previousMatched && !cuts.empty()) {
            Span& joined = cuts.back().span;
            if (withPrevious)
                joined.end = match.span.end;
            else
                joined.begin = match.span.begin;
        } else {
            cuts.push_back({match.span, false});
        }
        previousMatched = match.isMatch;
    };
    if (withPrevious) {
        std::for_each(matches.begin(), matches.end(), visit);
    } else {
        std::for_each(matches.rbegin(), matches.rend(), visit);
        std::reverse(cuts.begin(), cuts.end());
    }
    return cuts;
}

Cuts contiguousCuts(const Matches& matches) {
    Cuts cuts;
    bool previousMatched = false;
    for (const PatternMatch& match : matches) {
        if (match.isMatch == previousMatched && !cuts.empty())
            cuts.back().span.end = match.span.end;
        else
            cuts.push_back({match.span, false});
        previousMatched = match.isMatch;
    }
    return cuts;
}

Cuts removedCuts(const Matches& matches) {
    Cuts cuts;
    for (const PatternMatch& match : matches)
        cuts.push_back({match.span, match.isMatch});
    return cuts;
}

Cuts isolatedCuts(const Matches& matches) {
    Cuts cuts;
    for (const PatternMatch& match : matches)
        cuts.push_back({match.span, false});
    return cuts;
}

Cuts cutsFor(const Matches& matches, SplitBehavior behavior) {
    switch (behavior) {
    case SplitBehavior::Removed:
        return removedCuts(matches);
    case SplitBehavior::Isolated:
        return isolatedCuts(matches);
    case SplitBehavior::Contiguous:
        return contiguousCuts(matches);
    case SplitBehavior::MergedWithPrevious:
        return mergedCuts(matches, true);
    case SplitBehavior::MergedWithNext:
        break;
    }
    return mergedCuts(matches, false);
}
} // namespace

std::vector<NormalizedText> splitText(const NormalizedText& text, const Matches& matches,
                                      SplitBehavior behavior) {
    std::vector<NormalizedText> pieces;
    for (const Cut& cut : cutsFor(matches, behavior))
        if (!cut.dropped) pieces.push_back(text.slice(cut.span));
    return pieces;
}
} // namespace headlight::tokenize
