#pragma once
// Code-point helpers shared by the tokenizers: strict UTF-8 decoding and the character classes of
// Hugging Face's Rust tokenizers (Rust's char::is_whitespace, the unicode_categories crate, the
// CJK ranges of BertNormalizer), so that every component classifies characters the same way.

#include <string>
#include <string_view>

namespace headlight::tokenize {

// Throws TokenizerError naming the byte offset of the first invalid sequence (overlong forms,
// surrogates and values past U+10FFFF are invalid, as in a Rust String).
std::u32string decodeUtf8(std::string_view text);
std::string encodeUtf8(std::u32string_view text);
void appendUtf8(std::string& out, char32_t c);

bool isWhitespace(char32_t c);      // Unicode White_Space, as Rust's char::is_whitespace
bool isOther(char32_t c);           // general category C* (Cc, Cf, Cn, Co, Cs)
bool isBertPunctuation(char32_t c); // ASCII punctuation or general category P*
bool isChineseChar(char32_t c);     // the CJK blocks BertNormalizer pads with spaces
bool isNonspacingMark(char32_t c);  // general category Mn
bool isWordChar(char32_t c);        // Rust regex \w: alphabetic, marks, decimal digits, Pc

// Rust's char::to_lowercase: the full mapping, which can yield more than one character.
std::u32string toLowercase(char32_t c);
} // namespace headlight::tokenize
