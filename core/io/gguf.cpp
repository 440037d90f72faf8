#include "io/gguf.h"

#include "io/dtype_widening.h"
#include "io/mapped_file.h"
#include "io/tensor_file.h"

#include <cstring>

namespace headlight::io {
namespace {

// Far above any control vector (one tensor per layer, one short key per fact) and far below
// what would let a hostile count allocate memory.
constexpr uint64_t kGgufMaxTensors = 4096;
constexpr uint64_t kGgufMaxKeyValues = 4096;
constexpr uint64_t kGgufMaxStringBytes = 1 << 20;
constexpr uint64_t kGgufMaxArrayElements = 1 << 24;
constexpr uint32_t kGgufMaxDims = 4; // GGML_MAX_DIMS
constexpr uint64_t kGgufMaxFileBytes = 256ull << 20;
constexpr uint64_t kGgufDefaultAlignment = 32;

// GGUF's value types (gguf_type) and the ggml tensor types read (ggml_type).
namespace gguf_type {
enum : uint32_t { U8, I8, U16, I16, U32, I32, F32, Bool, String, Array, U64, I64, F64 };
}
namespace ggml_type {
enum : uint32_t { F32 = 0, F16 = 1 };
}

// The bytes of a scalar of `type`; 0 for strings and arrays, which carry their lengths.
uint64_t ggufScalarBytes(uint32_t type) {
    switch (type) {
    case gguf_type::U8:
    case gguf_type::I8:
    case gguf_type::Bool:
        return 1;
    case gguf_type::U16:
    case gguf_type::I16:
        return 2;
    case gguf_type::U32:
    case gguf_type::I32:
    case gguf_type::F32:
        return 4;
    case gguf_type::U64:
    case gguf_type::I64:
    case gguf_type::F64:
        return 8;
    default:
        return 0;
    }
}

class GgufCursor {
public:
    GgufCursor(std::span<const std::byte> bytes, const std::string& name)
        : bytes_(bytes)
        , name_(name) {}
    [[noreturn]] void fail(const std::string& reason) const {
        throw GgufError(name_ + ": " + reason);
    }
    uint64_t offset() const { return offset_; }
    uint64_t left() const { return bytes_.size() - offset_; }
    void need(uint64_t count, const char* what) const {
        if (count > left())
            fail(std::string("truncated: ") + what + " needs " + std::to_string(count) +
                 " bytes at offset " + std::to_string(offset_) + ", the file has " +
                 std::to_string(left()) + " left");
    }
    template <typename T> T read(const char* what) {
        need(sizeof(T), what);
        T value;
        std::memcpy(&value, bytes_.data() + offset_, sizeof(T));
        offset_ += sizeof(T);
        return value;
    }
    void skip(uint64_t count, const char* what) {
        need(count, what);
        offset_ += count;
    }
    std::string string(const char* what) {
        const uint64_t length = read<uint64_t>(what);
        if (length > kGgufMaxStringBytes)
            fail(std::string(what) + " is " + std::to_string(length) + " bytes long, over the " +
                 std::to_string(kGgufMaxStringBytes) + " read");
        need(length, what);
        std::string text(reinterpret_cast<const char*>(bytes_.data() + offset_), length);
        offset_ += length;
        return text;
    }

private:
    std::span<const std::byte> bytes_;
    const std::string& name_;
    uint64_t offset_ = 0;
};

void skipGgufArray(GgufCursor& in, const std::string& key) {
    const uint32_t type = in.read<uint32_t>("an array's element type");
    const uint64_t count = in.read<uint64_t>("an array's length");
    if (count > kGgufMaxArrayElements)
        in.fail("metadata " + quotedName(key) + " holds " + std::to_string(count) +
                " elements, over the " + std::to_string(kGgufMaxArrayElements) + " read");
    if (type == gguf_type::String) {
        for (uint64_t i = 0; i < count; ++i)
            in.string("an array's string");
        return;
    }
    const uint64_t size = ggufScalarBytes(type);
    if (size == 0)
        in.fail("metadata " + quotedName(key) + " is an array of type " + std::to_string(type) +
                ", which GGUF does not define (or an array of arrays)");
    in.skip(count * size, "an array's elements");
}

// Reads one key-value; keeps strings, and general.alignment in `alignment`.
void readGgufKeyValue(GgufCursor& in, GgufFile& file, uint64_t& alignment) {
    const std::string key = in.string("a metadata key");
    const uint32_t type = in.read<uint32_t>("a metadata value's type");
    if (type == gguf_type::String) {
        file.strings[key] = in.string("a metadata string");
        return;
    }
    if (type == gguf_type::Array) return skipGgufArray(in, key);
    if (key == "general.alignment") {
        if (type != gguf_type::U32) in.fail("general.alignment is not a u32");
        alignment = in.read<uint32_t>("general.alignment");
        if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 65536)
            in.fail("general.alignment " + std::to_string(alignment) +
                    " is not a power of two up to 65536");
        return;
    }
    const uint64_t size = ggufScalarBytes(type);
    if (size == 0)
        in.fail("metadata " + quotedName(key) + " has type " + std::to_string(type) +
                ", which GGUF does not define");
    in.skip(size, "a metadata value");
}

struct GgufTensorEntry {
    std::string name;
    std::vector<int64_t> dims;
    uint32_t type = 0;
    uint64_t offset = 0;
    uint64_t bytes = 0;
};

GgufTensorEntry readGgufTensorInfo(GgufCursor& in) {
    GgufTensorEntry entry;
    entry.name = in.string("a tensor name");
    const uint32_t rank = in.read<uint32_t>("a tensor's dimension count");
    if (rank == 0 || rank > kGgufMaxDims)
        in.fail("tensor " + quotedName(entry.name) + " has " + std::to_string(rank) +
                " dimensions; GGUF allows 1 to 4");
    uint64_t elements = 1;
    for (uint32_t d = 0; d < rank; ++d) {
        const uint64_t size = in.read<uint64_t>("a tensor dimension");
        if (size == 0 || size > kGgufMaxFileBytes || elements > kGgufMaxFileBytes / size)
            in.fail("tensor " + quotedName(entry.name) + " has dimension " + std::to_string(size) +
                    ", beyond any tensor the file can hold");
        elements *= size;
        entry.dims.push_back(int64_t(size));
    }
    entry.type = in.read<uint32_t>("a tensor's type");
    if (entry.type != ggml_type::F32 && entry.type != ggml_type::F16)
        in.fail("tensor " + quotedName(entry.name) + " has ggml type " +
                std::to_string(entry.type) + "; Headlight reads F32 (0) and F16 (1) tensors only");
    entry.bytes = elements * (entry.type == ggml_type::F32 ? 4 : 2);
    entry.offset = in.read<uint64_t>("a tensor's offset");
    return entry;
}

GgufTensor loadGgufTensor(const GgufTensorEntry& entry, std::span<const std::byte> data,
                          uint64_t alignment, const GgufCursor& in) {
    if (entry.offset % alignment != 0)
        in.fail("tensor " + quotedName(entry.name) + " starts at offset " +
                std::to_string(entry.offset) + ", not a multiple of the alignment " +
                std::to_string(alignment));
    if (entry.offset > data.size() || entry.bytes > data.size() - entry.offset)
        in.fail("truncated: tensor " + quotedName(entry.name) + " needs bytes " +
                std::to_string(entry.offset) + " to " + std::to_string(entry.offset + entry.bytes) +
                " of the data section, which has " + std::to_string(data.size()));
    GgufTensor tensor;
    tensor.name = entry.name;
    tensor.dims = entry.dims;
    const std::vector<int64_t> shape(entry.dims.rbegin(), entry.dims.rend());
    tensor.values = Tensor(shape);
    widenToF32(entry.type == ggml_type::F32 ? DType::F32 : DType::F16,
               data.subspan(std::size_t(entry.offset), std::size_t(entry.bytes)),
               tensor.values.data());
    return tensor;
}
} // namespace

GgufFile parseGguf(std::span<const std::byte> bytes, const std::string& name) {
    GgufCursor in(bytes, name);
    if (bytes.size() < 4 || std::memcmp(bytes.data(), "GGUF", 4) != 0)
        in.fail("not a GGUF file (it does not start with \"GGUF\")");
    in.skip(4, "the magic");
    GgufFile file;
    file.version = in.read<uint32_t>("the version");
    if (file.version != 2 && file.version != 3)
        in.fail("GGUF version " + std::to_string(file.version) + "; Headlight reads 2 and 3");
    const uint64_t tensors = in.read<uint64_t>("the tensor count");
    const uint64_t keyValues = in.read<uint64_t>("the metadata count");
    if (tensors > kGgufMaxTensors)
        in.fail("the header counts " + std::to_string(tensors) + " tensors, over the " +
                std::to_string(kGgufMaxTensors) + " read");
    if (keyValues > kGgufMaxKeyValues)
        in.fail("the header counts " + std::to_string(keyValues) + " metadata entries, over the " +
                std::to_string(kGgufMaxKeyValues) + " read");
    uint64_t alignment = kGgufDefaultAlignment;
    for (uint64_t i = 0; i < keyValues; ++i)
        readGgufKeyValue(in, file, alignment);
    std::vector<GgufTensorEntry> entries;
    for (uint64_t i = 0; i < tensors; ++i)
        entries.push_back(readGgufTensorInfo(in));
    const uint64_t start = (in.offset() + alignment - 1) / alignment * alignment;
    if (!entries.empty() && start > bytes.size())
        in.fail("truncated: the data section would start at " + std::to_string(start) +
                ", past the file's " + std::to_string(bytes.size()) + " bytes");
    const std::span<const std::byte> data =
        start <= bytes.size() ? bytes.subspan(std::size_t(start)) : std::span<const std::byte>();
    for (const GgufTensorEntry& entry : entries)
        file.tensors.push_back(loadGgufTensor(entry, data, alignment, in));
    return file;
}

GgufFile readGguf(const std::string& path) {
    const MappedFile mapped(path);
    if (mapped.bytes().size() > kGgufMaxFileBytes)
        throw GgufError(path + ": " + std::to_string(mapped.bytes().size()) +
                        " bytes, over the 256 MiB a control vector could need");
    return parseGguf(mapped.bytes(), path);
}
} // namespace headlight::io
