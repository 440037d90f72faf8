#include "unicode_text.h"

#include "tokenizer.h"

#include <QChar>
#include <QList>
#include <QString>

namespace headlight::tokenize {
namespace {

int sequenceLength(unsigned char lead) {
    if (lead < 0x80) return 1;
    if (lead >= 0xC2 && lead <= 0xDF) return 2;
    if (lead >= 0xE0 && lead <= 0xEF) return 3;
    if (lead >= 0xF0 && lead <= 0xF4) return 4;
    return 0;
}

// Decodes the sequence at `text[at]`, or returns an invalid marker past U+10FFFF.
char32_t decodeOne(std::string_view text, size_t at, int length) {
    const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[at + i]); };
    if (length == 1) return byte(0);
    char32_t c = byte(0) & (0x7F >> length);
    for (int i = 1; i < length; ++i) {
        if (at + i >= text.size() || (byte(i) & 0xC0) != 0x80) return 0x110000;
        c = (c << 6) | (byte(i) & 0x3F);
    }
    const char32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < smallest[length] || (c >= 0xD800 && c <= 0xDFFF)) return 0x110000;
    return c;
}

QChar::Category categoryOf(char32_t c) {
    return QChar::category(c);
}
} // namespace

std::u32string decodeUtf8(std::string_view text) {
    std::u32string out;
    out.reserve(text.size());
    for (size_t at = 0; at < text.size();) {
        const int length = sequenceLength(static_cast<unsigned char>(text[at]));
        const char32_t c = length == 0 ? 0x110000 : decodeOne(text, at, length);
        if (c > 0x10FFFF)
            throw TokenizerError("text is not valid UTF-8 (bad byte sequence at byte " +
                                 std::to_string(at) + ")");
        out.push_back(c);
        at += length;
    }
    return out;
}

void appendUtf8(std::string& out, char32_t c) {
    if (c < 0x80) {
        out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (c >> 6)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (c >> 12)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (c >> 18)));
        out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
}

std::string encodeUtf8(std::u32string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char32_t c : text)
        appendUtf8(out, c);
    return out;
}

bool isWhitespace(char32_t c) {
    if ((c >= 0x09 && c <= 0x0D) || c == 0x20) return true;
    if (c < 0x85) return false;
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
           c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool isOther(char32_t c) {
    switch (categoryOf(c)) {
    case QChar::Other_Control:
    case QChar::Other_Format:
    case QChar::Other_NotAssigned:
    case QChar::Other_PrivateUse:
    case QChar::Other_Surrogate:
        return true;
    default:
        return false;
    }
}

bool isBertPunctuation(char32_t c) {
    if (c < 0x80)
        return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
               (c >= 123 && c <= 126);
    const QChar::Category category = categoryOf(c);
    return category >= QChar::Punctuation_Connector && category <= QChar::Punctuation_Other;
}

bool isChineseChar(char32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
           (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool isNonspacingMark(char32_t c) {
    return categoryOf(c) == QChar::Mark_NonSpacing;
}

bool isWordChar(char32_t c) {
    if (c < 0x80)
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               c == '_';
    const QChar::Category category = categoryOf(c);
    return (category >= QChar::Mark_NonSpacing && category <= QChar::Mark_Enclosing) ||
           (category >= QChar::Letter_Uppercase && category <= QChar::Letter_Other) ||
           category == QChar::Number_DecimalDigit || category == QChar::Number_Letter ||
           category == QChar::Punctuation_Connector || c == 0x200C || c == 0x200D;
}

std::u32string toLowercase(char32_t c) {
    if (c < 0x80) return std::u32string(1, (c >= 'A' && c <= 'Z') ? c + 32 : c);
    const QList<uint> lowered = QString::fromUcs4(&c, 1).toLower().toUcs4();
    return std::u32string(lowered.begin(), lowered.end());
}
} // namespace headlight::tokenize
