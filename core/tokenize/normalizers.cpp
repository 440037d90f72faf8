#include "normalizers.h"

#include "unicode_text.h"

namespace headlight::tokenize {
namespace {

void lowercase(NormalizedText& text) {
    text.expandEach(toLowercase);
}

void applyNormalForm(NormalizedText& text, NormalForm form) {
    if (const auto changes = normalizeWithChanges(text.chars(), form)) text.transform(*changes, 0);
}

void stripAccents(NormalizedText& text) {
    text.expandEach(
        [](char32_t c) { return isNonspacingMark(c) ? std::u32string() : std::u32string(1, c); });
}

bool isBertControl(char32_t c) {
    return c != '\t' && c != '\n' && c != '\r' && isOther(c);
}

// Drops NUL, U+FFFD and control characters; every kind of whitespace becomes a plain space.
void cleanText(NormalizedText& text) {
    text.expandEach([](char32_t c) {
        if (c == 0 || c == 0xFFFD || isBertControl(c)) return std::u32string();
        return std::u32string(1, isWhitespace(c) ? U' ' : c);
    });
}

void padChineseChars(NormalizedText& text) {
    text.expandEach([](char32_t c) {
        return isChineseChar(c) ? std::u32string{U' ', c, U' '} : std::u32string(1, c);
    });
}
} // namespace

void BertNormalizer::normalize(NormalizedText& text) const {
    if (options_.cleanText) cleanText(text);
    if (options_.handleChineseChars) padChineseChars(text);
    if (options_.stripAccents.value_or(options_.lowercase)) {
        applyNormalForm(text, NormalForm::NFD);
        stripAccents(text);
    }
    if (options_.lowercase) lowercase(text);
}

void LowercaseNormalizer::normalize(NormalizedText& text) const {
    lowercase(text);
}

void UnicodeNormalizer::normalize(NormalizedText& text) const {
    applyNormalForm(text, form_);
}

void StripAccentsNormalizer::normalize(NormalizedText& text) const {
    stripAccents(text);
}

void PrependNormalizer::normalize(NormalizedText& text) const {
    text.prepend(prefix_);
}

void ReplaceNormalizer::normalize(NormalizedText& text) const {
    text.replace(pattern_.matchedSpans(text.chars()), content_);
}

void NormalizerSequence::normalize(NormalizedText& text) const {
    for (const auto& step : steps_)
        step->normalize(text);
}
} // namespace headlight::tokenize
