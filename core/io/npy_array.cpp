#include "io/npy_array.h"

#include "io/dtype_widening.h"

#include <cstring>

namespace headlight::io {
namespace {

constexpr std::size_t kNpyMagicBytes = 6;
constexpr std::size_t kMaxNpyHeaderBytes = 1 << 16; // numpy itself reads at most 10,000 by default
constexpr std::size_t kMaxNpyRank = 8;
constexpr int64_t kMaxNpyDim = int64_t(1) << 40;

[[noreturn]] void npyFail(const std::string& source, const std::string& problem) {
    throw CheckpointError(source + ": " + problem);
}

// The header's dict literal, read token by token.
class NpyHeaderReader {
public:
    NpyHeaderReader(const std::string& source, std::string_view text)
        : source_(source)
        , text_(text) {}

    NpyArray read() {
        NpyArray array;
        bool haveDescr = false, haveOrder = false, haveShape = false;
        expect('{');
        while (!consume('}')) {
            const std::string key = quoted();
            expect(':');
            if (key == "descr" && !haveDescr) {
                array.dtype = dtypeOf(quoted());
                haveDescr = true;
            } else if (key == "fortran_order" && !haveOrder) {
                array.fortranOrder = boolean();
                haveOrder = true;
            } else if (key == "shape" && !haveShape) {
                array.shape = shape();
                haveShape = true;
            } else {
                fail("key " + quotedName(key) + " is unknown or repeated");
            }
            if (!consume(',')) {
                expect('}');
                break;
            }
        }
        skipSpace();
        if (at_ != text_.size()) fail("text after the header's dict");
        if (!haveDescr || !haveOrder || !haveShape)
            fail("the header lacks descr, fortran_order or shape");
        return array;
    }

private:
    [[noreturn]] void fail(const std::string& problem) const {
        npyFail(source_, "the .npy header is not one numpy writes (" + problem + ")");
    }
    void skipSpace() {
        while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n'))
            ++at_;
    }
    bool consume(char c) {
        skipSpace();
        if (at_ < text_.size() && text_[at_] == c) {
            ++at_;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!consume(c)) fail(std::string("expected '") + c + "' at byte " + std::to_string(at_));
    }
    std::string quoted() {
        skipSpace();
        if (at_ >= text_.size() || (text_[at_] != '\'' && text_[at_] != '"'))
            fail("expected a quoted string at byte " + std::to_string(at_));
        const char quote = text_[at_++];
        const std::size_t end = text_.find(quote, at_);
        if (end == std::string_view::npos) fail("an unterminated string");
        std::string value(text_.substr(at_, end - at_));
        at_ = end + 1;
        return value;
    }
    bool boolean() {
        skipSpace();
        for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}})
            if (text_.substr(at_, std::strlen(word)) == word) {
                at_ += std::strlen(word);
                return value;
            }
        fail("fortran_order is not True or False");
    }
    std::vector<int64_t> shape() {
        expect('(');
        std::vector<int64_t> dims;
        while (!consume(')')) {
            skipSpace();
            int64_t dim = 0;
            const std::size_t start = at_;
            while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') {
                dim = dim * 10 + (text_[at_++] - '0');
                if (dim > kMaxNpyDim) fail("a dimension above 2^40");
            }
            if (at_ == start) fail("a dimension that is not a non-negative integer");
            dims.push_back(dim);
            if (dims.size() > kMaxNpyRank) fail("more than 8 dimensions");
            if (!consume(',')) {
                expect(')');
                break;
            }
        }
        return dims;
    }
    DType dtypeOf(const std::string& descr) const {
        if (descr == "<f4") return DType::F32;
        if (descr == "<f2") return DType::F16;
        if (descr == "<f8") return DType::F64;
        npyFail(source_, "dtype " + quotedName(descr) +
                             " is not a little-endian float ('<f2', '<f4', '<f8'), which an SAE "
                             "stores");
    }

    const std::string& source_;
    std::string_view text_;
    std::size_t at_ = 0;
};

uint64_t npyLittle(std::span<const std::byte> bytes, std::size_t at, int width) {
    uint64_t value = 0;
    for (int i = width - 1; i >= 0; --i)
        value = (value << 8) | static_cast<uint8_t>(bytes[at + std::size_t(i)]);
    return value;
}
} // namespace

NpyArray parseNpy(const std::string& source, std::span<const std::byte> file) {
    static const char magic[kNpyMagicBytes] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};
    if (file.size() < kNpyMagicBytes + 4 || std::memcmp(file.data(), magic, kNpyMagicBytes) != 0)
        npyFail(source, "not a .npy array (no \\x93NUMPY magic)");
    const auto major = static_cast<uint8_t>(file[kNpyMagicBytes]);
    if (major < 1 || major > 3)
        npyFail(source, ".npy format version " + std::to_string(major) + " is not 1, 2 or 3");
    const int lengthBytes = major == 1 ? 2 : 4;
    const std::size_t headerStart = kNpyMagicBytes + 2 + std::size_t(lengthBytes);
    if (file.size() < headerStart) npyFail(source, "truncated in its .npy preamble");
    const uint64_t headerLength = npyLittle(file, kNpyMagicBytes + 2, lengthBytes);
    if (headerLength > kMaxNpyHeaderBytes || headerLength > file.size() - headerStart)
        npyFail(source, "its .npy header of " + std::to_string(headerLength) +
                            " bytes runs past the " + std::to_string(file.size()) +
                            "-byte array or the 64 kB limit");
    const std::string_view header(reinterpret_cast<const char*>(file.data() + headerStart),
                                  std::size_t(headerLength));
    NpyArray array = NpyHeaderReader(source, header).read();
    uint64_t count = 1;
    for (int64_t dim : array.shape) {
        if (dim != 0 && count > (uint64_t(1) << 62) / uint64_t(dim))
            npyFail(source, "its shape holds more elements than any file can");
        count *= uint64_t(dim);
    }
    const uint64_t available = file.size() - headerStart - headerLength;
    const uint64_t needed = count * dtypeSize(array.dtype);
    if (needed != available)
        npyFail(source, "its shape " + shapeString(array.shape) + " needs " +
                            std::to_string(needed) + " bytes of elements but " +
                            std::to_string(available) + " follow the header (truncated or padded)");
    array.elements = file.subspan(headerStart + std::size_t(headerLength));
    return array;
}

std::vector<float> npyToF32(const NpyArray& array) {
    std::vector<float> stored(array.elements.size() / dtypeSize(array.dtype));
    widenToF32(array.dtype, array.elements, stored.data());
    if (!array.fortranOrder || array.shape.size() < 2) return stored;
    // Fortran order: the first index varies fastest. Walk the C-order index and look each up.
    const std::size_t rank = array.shape.size();
    std::vector<uint64_t> stride(rank, 1);
    for (std::size_t d = 1; d < rank; ++d)
        stride[d] = stride[d - 1] * uint64_t(array.shape[d - 1]);
    std::vector<float> out(stored.size());
    std::vector<int64_t> index(rank, 0);
    for (float& value : out) {
        uint64_t at = 0;
        for (std::size_t d = 0; d < rank; ++d)
            at += uint64_t(index[d]) * stride[d];
        value = stored[std::size_t(at)];
        for (std::size_t d = rank; d-- > 0;) {
            if (++index[d] < array.shape[d]) break;
            index[d] = 0;
        }
    }
    return out;
}
} // namespace headlight::io
