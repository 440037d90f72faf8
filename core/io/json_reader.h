#pragma once
// A strict, streaming JSON reader for files an attacker may have written: safetensors headers and
// shard indexes. QJsonDocument is not enough there: it silently keeps one of two duplicate keys
// (so a header could name the same tensor twice and we would never know), and it turns every
// number into a double (so 1.5, 1e300 or 2^53 + 1 would pass as an offset). This reader hands
// the caller each object key in file order, so duplicates can be caught, and each number as the
// literal text written, so integers can be checked exactly. It builds no tree: values the caller
// does not want are skipped, and nesting depth is bounded, so a hostile document costs no more
// memory than the caller chooses to keep.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace headlight::io {

// Malformed JSON (or malformed UTF-8) at byte `offset()` of the document.
class JsonSyntaxError : public std::runtime_error {
public:
    JsonSyntaxError(const std::string& problem, std::size_t offset);
    std::size_t offset() const { return offset_; }

private:
    std::size_t offset_;
};

// The byte offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or nothing when all of `text` is well formed.
std::optional<std::size_t> firstInvalidUtf8(std::string_view text);

// `literal` as an integer when it is written as plain decimal digits (no sign, fraction or
// exponent) and is at most `max`; nothing otherwise.
std::optional<uint64_t> exactUnsignedInteger(std::string_view literal, uint64_t max);

class JsonReader {
public:
    enum class Kind { Object, Array, String, Number, Bool, Null };
    static const char* kindName(Kind kind); // "an object", "an array", "a string", ...

    // Throws JsonSyntaxError when `text` is not well-formed UTF-8.
    explicit JsonReader(std::string_view text);

    // The kind of the next value, after skipping whitespace. Throws JsonSyntaxError at the end
    // of the text or at a character that cannot start a value.
    Kind peekKind();
    std::size_t offset() const { return position_; }

    // Each reads one value of its kind and throws JsonSyntaxError when the text is not that.
    // readObject calls onMember(key) for every member in file order, duplicates included; the
    // callback must consume the member's value (read it or skip it).
    void readObject(const std::function<void(const std::string& key)>& onMember);
    void readArray(const std::function<void(std::size_t index)>& onItem);
    std::string readString();
    std::string_view readNumber(); // the literal as written, checked against JSON's grammar
    bool readBool();
    void readNull();
    void skipValue();
    void expectEnd(); // nothing but whitespace may follow the value

private:
    [[noreturn]] void fail(const std::string& problem) const;
    void skipWhitespace();
    bool atEnd() const { return position_ >= text_.size(); }
    char current() const { return text_[position_]; }
    void expect(char wanted, const char* context);
    bool consumeIf(char wanted);
    void consumeLiteral(std::string_view literal);
    void enterContainer();
    void appendEscape(std::string& out);
    uint32_t readHex4();
    void skipDigits();

    std::string_view text_;
    std::size_t position_ = 0;
    int depth_ = 0;
};
} // namespace headlight::io
