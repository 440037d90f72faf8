#include "io/json_reader.h"

namespace headlight::io {
namespace {
// Why a bound at all: every nested container is a recursive call, and a header of 100 MB of '['
// would otherwise exhaust the stack. Real safetensors headers and indexes nest three deep.
constexpr int kMaxDepth = 128;

bool isContinuation(unsigned char byte) {
    return (byte & 0xC0) == 0x80;
}

// The length of the well-formed UTF-8 sequence at text[at], or 0 when it is malformed. The
// lead byte fixes which range the second byte may take, which rules out overlong forms,
// surrogates (ED A0..BF) and code points above U+10FFFF in one check (RFC 3629, table 3-7).
std::size_t utf8SequenceLength(std::string_view text, std::size_t at) {
    const auto lead = static_cast<unsigned char>(text[at]);
    if (lead < 0x80) return 1;
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF)
        length = 2;
    else if (lead == 0xE0)
        length = 3, low = 0xA0;
    else if (lead == 0xED)
        length = 3, high = 0x9F;
    else if (lead >= 0xE1 && lead <= 0xEF)
        length = 3;
    else if (lead == 0xF0)
        length = 4, low = 0x90;
    else if (lead >= 0xF1 && lead <= 0xF3)
        length = 4;
    else if (lead == 0xF4)
        length = 4, high = 0x8F;
    else
        return 0;
    if (at + length > text.size()) return 0;
    const auto second = static_cast<unsigned char>(text[at + 1]);
    if (second < low || second > high) return 0;
    for (std::size_t i = 2; i < length; ++i)
        if (!isContinuation(static_cast<unsigned char>(text[at + i]))) return 0;
    return length;
}

void appendUtf8(std::string& out, uint32_t codePoint) {
    if (codePoint < 0x80) {
        out += static_cast<char>(codePoint);
    } else if (codePoint < 0x800) {
        out += static_cast<char>(0xC0 | (codePoint >> 6));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    } else if (codePoint < 0x10000) {
        out += static_cast<char>(0xE0 | (codePoint >> 12));
        out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (codePoint >> 18));
        out += static_cast<char>(0x80 | ((codePoint >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    }
}

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}
bool isHighSurrogate(uint32_t unit) {
    return unit >= 0xD800 && unit <= 0xDBFF;
}
bool isLowSurrogate(uint32_t unit) {
    return unit >= 0xDC00 && unit <= 0xDFFF;
}

// Leaves the container on every exit path, exceptions included.
class DepthGuard {
public:
    explicit DepthGuard(int& depth)
        : depth_(depth) {}
    ~DepthGuard() { --depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

private:
    int& depth_;
};
} // namespace

JsonSyntaxError::JsonSyntaxError(const std::string& problem, std::size_t offset)
    : std::runtime_error(problem)
    , offset_(offset) {}

std::optional<std::size_t> firstInvalidUtf8(std::string_view text) {
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t length = utf8SequenceLength(text, at);
        if (length == 0) return at;
        at += length;
    }
    return std::nullopt;
}

std::optional<uint64_t> exactUnsignedInteger(std::string_view literal, uint64_t max) {
    if (literal.empty()) return std::nullopt;
    uint64_t value = 0;
    for (char c : literal) {
        if (!isDigit(c)) return std::nullopt;
        const auto digit = static_cast<uint64_t>(c - '0');
        if (value > (max - digit) / 10) return std::nullopt;
        value = value * 10 + digit;
    }
    return value;
}

const char* JsonReader::kindName(Kind kind) {
    switch (kind) {
    case Kind::Object:
        return "an object";
    case Kind::Array:
        return "an array";
    case Kind::String:
        return "a string";
    case Kind::Number:
        return "a number";
    case Kind::Bool:
        return "a boolean";
    case Kind::Null:
        return "null";
    }
    return "a value";
}

JsonReader::JsonReader(std::string_view text)
    : text_(text) {
    if (const auto bad = firstInvalidUtf8(text)) throw JsonSyntaxError("invalid UTF-8", *bad);
}

void JsonReader::fail(const std::string& problem) const {
    throw JsonSyntaxError(problem, position_);
}

void JsonReader::skipWhitespace() {
    while (!atEnd() &&
           (current() == ' ' || current() == '\t' || current() == '\n' || current() == '\r'))
        ++position_;
}

void JsonReader::expect(char wanted, const char* context) {
    skipWhitespace();
    if (atEnd() || current() != wanted) fail(std::string("expected '") + wanted + "' " + context);
    ++position_;
}

bool JsonReader::consumeIf(char wanted) {
    skipWhitespace();
    if (atEnd() || current() != wanted) return false;
    ++position_;
    return true;
}

void JsonReader::consumeLiteral(std::string_view literal) {
    if (text_.substr(position_, literal.size()) != literal)
        fail("expected '" + std::string(literal) + "'");
    position_ += literal.size();
}

void JsonReader::enterContainer() {
    if (++depth_ > kMaxDepth) {
        --depth_;
        fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    }
}

JsonReader::Kind JsonReader::peekKind() {
    skipWhitespace();
    if (atEnd()) fail("unexpected end of text");
    switch (current()) {
    case '{':
        return Kind::Object;
    case '[':
        return Kind::Array;
    case '"':
        return Kind::String;
    case 't':
    case 'f':
        return Kind::Bool;
    case 'n':
        return Kind::Null;
    default:
        if (current() == '-' || isDigit(current())) return Kind::Number;
        fail(std::string("unexpected character '") + current() + "'");
    }
}

void JsonReader::readObject(const std::function<void(const std::string& key)>& onMember) {
    expect('{', "to open an object");
    enterContainer();
    const DepthGuard guard(depth_);
    if (consumeIf('}')) return;
    do {
        skipWhitespace();
        if (atEnd() || current() != '"') fail("expected a string key in an object");
        const std::string key = readString();
        expect(':', "after an object key");
        onMember(key);
    } while (consumeIf(','));
    expect('}', "or ',' in an object");
}

void JsonReader::readArray(const std::function<void(std::size_t index)>& onItem) {
    expect('[', "to open an array");
    enterContainer();
    const DepthGuard guard(depth_);
    if (consumeIf(']')) return;
    std::size_t index = 0;
    do {
        onItem(index++);
    } while (consumeIf(','));
    expect(']', "or ',' in an array");
}

uint32_t JsonReader::readHex4() {
    uint32_t unit = 0;
    for (int i = 0; i < 4; ++i, ++position_) {
        if (atEnd()) fail("unexpected end of text in a \\u escape");
        const char c = current();
        unit <<= 4;
        if (isDigit(c))
            unit |= static_cast<uint32_t>(c - '0');
        else if (c >= 'a' && c <= 'f')
            unit |= static_cast<uint32_t>(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            unit |= static_cast<uint32_t>(c - 'A' + 10);
        else
            fail("invalid hex digit in a \\u escape");
    }
    return unit;
}

// Why lone surrogates are refused: they have no UTF-8 form, so the decoded name would be
// malformed; serde_json (the reference reader) refuses them too.
void JsonReader::appendEscape(std::string& out) {
    if (atEnd()) fail("unexpected end of text in an escape");
    const char kind = current();
    ++position_;
    switch (kind) {
    case '"':
        out += '"';
        return;
    case '\\':
        out += '\\';
        return;
    case '/':
        out += '/';
        return;
    case 'b':
        out += '\b';
        return;
    case 'f':
        out += '\f';
        return;
    case 'n':
        out += '\n';
        return;
    case 'r':
        out += '\r';
        return;
    case 't':
        out += '\t';
        return;
    case 'u':
        break;
    default:
        --position_;
        fail(std::string("invalid escape '\\") + kind + "'");
    }
    uint32_t codePoint = readHex4();
    if (isLowSurrogate(codePoint)) fail("lone low surrogate in a \\u escape");
    if (isHighSurrogate(codePoint)) {
        if (text_.substr(position_, 2) != "\\u") fail("lone high surrogate in a \\u escape");
        position_ += 2;
        const uint32_t low = readHex4();
        if (!isLowSurrogate(low)) fail("high surrogate not followed by a low one");
        codePoint = 0x10000 + ((codePoint - 0xD800) << 10) + (low - 0xDC00);
    }
    appendUtf8(out, codePoint);
}

std::string JsonReader::readString() {
    expect('"', "to open a string");
    std::string out;
    while (true) {
        if (atEnd()) fail("unterminated string");
        const char c = current();
        if (c == '"') break;
        if (static_cast<unsigned char>(c) < 0x20) fail("unescaped control character in a string");
        ++position_;
        if (c == '\\')
            appendEscape(out);
        else
            out += c; // multi-byte UTF-8 passes through: the constructor checked it
    }
    ++position_;
    return out;
}

void JsonReader::skipDigits() {
    while (!atEnd() && isDigit(current()))
        ++position_;
}

std::string_view JsonReader::readNumber() {
    skipWhitespace();
    const std::size_t start = position_;
    if (!atEnd() && current() == '-') ++position_;
    if (atEnd() || !isDigit(current())) fail("expected a digit in a number");
    if (current() == '0')
        ++position_; // JSON forbids leading zeros such as 012
    else
        skipDigits();
    if (!atEnd() && current() == '.') {
        ++position_;
        if (atEnd() || !isDigit(current())) fail("expected a digit after '.' in a number");
        skipDigits();
    }
    if (!atEnd() && (current() == 'e' || current() == 'E')) {
        ++position_;
        if (!atEnd() && (current() == '+' || current() == '-')) ++position_;
        if (atEnd() || !isDigit(current())) fail("expected a digit in a number's exponent");
        skipDigits();
    }
    return text_.substr(start, position_ - start);
}

bool JsonReader::readBool() {
    skipWhitespace();
    if (!atEnd() && current() == 't') {
        consumeLiteral("true");
        return true;
    }
    consumeLiteral("false");
    return false;
}

void JsonReader::readNull() {
    skipWhitespace();
    consumeLiteral("null");
}

void JsonReader::skipValue() {
    switch (peekKind()) {
    case Kind::Object:
        readObject([this](const std::string&) { skipValue(); });
        return;
    case Kind::Array:
        readArray([this](std::size_t) { skipValue(); });
        return;
    case Kind::String:
        readString();
        return;
    case Kind::Number:
        readNumber();
        return;
    case Kind::Bool:
        readBool();
        return;
    case Kind::Null:
        readNull();
        return;
    }
}

void JsonReader::expectEnd() {
    skipWhitespace();
    if (!atEnd()) fail("unexpected text after the end of the document");
}
} // namespace headlight::io
