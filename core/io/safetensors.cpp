#include "io/safetensors.h"

#include "io/dtype_widening.h"
#include "io/json_reader.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>

namespace headlight::io {

// Why: the format is little-endian and tensors are copied byte for byte into host values.
static_assert(std::endian::native == std::endian::little, "Headlight assumes a little-endian host");

namespace {
constexpr uint64_t kLengthPrefixBytes = 8;
// The reference implementation's bound (safetensors' MAX_HEADER_SIZE): a header is a table of
// contents, and a claimed gigabyte of it is an attack, not a model.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// Integers above 2^53 are not exact in the doubles most JSON readers use, so a file relying on
// them means different things to different readers; refuse them.
constexpr uint64_t kMaxJsonInteger = uint64_t(1) << 53;
// NumPy's own limit on dimensions; a longer shape is an attack on memory, not a tensor.
constexpr std::size_t kMaxRank = 64;
constexpr const char* kMetadataKey = "__metadata__";

struct DTypeEntry {
    DType dtype;
    const char* name;
    std::size_t size;
};

constexpr DTypeEntry kDTypes[] = {
    {DType::F64, "F64", 8},   {DType::F32, "F32", 4}, {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2}, {DType::I64, "I64", 8}, {DType::I32, "I32", 4},
    {DType::I16, "I16", 2},   {DType::I8, "I8", 1},   {DType::U8, "U8", 1},
    {DType::Bool, "BOOL", 1},
};

const DTypeEntry& entryOf(DType dtype) {
    for (const auto& entry : kDTypes)
        if (entry.dtype == dtype) return entry;
    throw std::logic_error("unlisted dtype");
}

std::optional<DType> parseDType(const std::string& name) {
    for (const auto& entry : kDTypes)
        if (name == entry.name) return entry.dtype;
    return std::nullopt;
}

std::string supportedDTypes() {
    std::string list;
    for (const auto& entry : kDTypes)
        list += std::string(list.empty() ? "" : ", ") + entry.name;
    return list;
}

bool isIntegerDType(DType dtype) {
    return dtype == DType::I64 || dtype == DType::I32 || dtype == DType::I16 ||
           dtype == DType::I8 || dtype == DType::U8 || dtype == DType::Bool;
}

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
    throw CheckpointError(path + ": " + problem);
}

// Names come from the file and a header may be 100 MB: a message shows a name's first 200 bytes
// (cut at a UTF-8 character boundary), so that a hostile name cannot flood a terminal or a dialog.
std::string quoted(const std::string& name) {
    constexpr std::size_t kShown = 200;
    if (name.size() <= kShown) return "'" + name + "'";
    std::size_t cut = kShown;
    while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80)
        --cut;
    return "'" + name.substr(0, cut) + "…'";
}

std::string rangeString(uint64_t begin, uint64_t end) {
    return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

// A hostile literal may be megabytes long; messages show its start only.
std::string clipped(std::string_view text) {
    constexpr std::size_t kShown = 40;
    return text.size() <= kShown ? std::string(text) : std::string(text.substr(0, kShown)) + "…";
}

uint64_t readU64LittleEndian(const std::byte* at) {
    uint64_t value = 0;
    std::memcpy(&value, at, sizeof value);
    return value;
}

// Reads the JSON header straight into TensorInfo records, checking each entry as it goes.
class HeaderParser {
public:
    HeaderParser(const std::string& path, std::string_view header, uint64_t dataSize)
        : path_(path)
        , header_(header)
        , dataSize_(dataSize) {}

    void parse(std::map<std::string, TensorInfo>& tensors,
               std::map<std::string, std::string>& metadata);

private:
    [[noreturn]] void fail(const std::string& problem) const { io::fail(path_, problem); }
    [[noreturn]] void failTensor(const std::string& name, const std::string& problem) const {
        fail("tensor " + quoted(name) + ": " + problem);
    }
    void readTopLevel(JsonReader& reader, std::map<std::string, TensorInfo>& tensors,
                      std::map<std::string, std::string>& metadata);
    void readMetadata(JsonReader& reader, std::map<std::string, std::string>& metadata);
    TensorInfo readTensor(JsonReader& reader, const std::string& name);
    DType readDType(JsonReader& reader, const std::string& name);
    std::vector<int64_t> readShape(JsonReader& reader, const std::string& name);
    std::pair<uint64_t, uint64_t> readOffsets(JsonReader& reader, const std::string& name);
    uint64_t readExactInteger(JsonReader& reader, const std::string& name, const std::string& what);
    void checkByteRange(const TensorInfo& tensor) const;

    const std::string& path_;
    std::string_view header_;
    uint64_t dataSize_;
    bool sawMetadata_ = false;
};

void HeaderParser::parse(std::map<std::string, TensorInfo>& tensors,
                         std::map<std::string, std::string>& metadata) {
    if (const auto bad = firstInvalidUtf8(header_))
        fail("header is not valid UTF-8 (byte " + std::to_string(*bad) + " of the header)");
    try {
        JsonReader reader(header_);
        readTopLevel(reader, tensors, metadata);
    } catch (const JsonSyntaxError& error) {
        fail("header is not valid JSON (byte " + std::to_string(error.offset()) +
             " of the header: " + error.what() + ")");
    }
}

void HeaderParser::readTopLevel(JsonReader& reader, std::map<std::string, TensorInfo>& tensors,
                                std::map<std::string, std::string>& metadata) {
    const auto kind = reader.peekKind();
    if (kind != JsonReader::Kind::Object) {
        // Check the rest first, so that broken JSON is reported as such.
        reader.skipValue();
        reader.expectEnd();
        fail(std::string("header is ") + JsonReader::kindName(kind) + ", not a JSON object");
    }
    reader.readObject([&](const std::string& key) {
        if (key == kMetadataKey) return readMetadata(reader, metadata);
        if (tensors.count(key)) fail("duplicate tensor name " + quoted(key) + " in the header");
        tensors.emplace(key, readTensor(reader, key));
    });
    reader.expectEnd();
}

void HeaderParser::readMetadata(JsonReader& reader, std::map<std::string, std::string>& metadata) {
    if (sawMetadata_) fail("duplicate __metadata__ in the header");
    sawMetadata_ = true;
    const auto kind = reader.peekKind();
    if (kind == JsonReader::Kind::Null) return reader.readNull(); // serde reads null as "none"
    if (kind != JsonReader::Kind::Object)
        fail(std::string("__metadata__ is ") + JsonReader::kindName(kind) +
             ", not an object of strings");
    reader.readObject([&](const std::string& key) {
        const auto valueKind = reader.peekKind();
        if (valueKind != JsonReader::Kind::String)
            fail("__metadata__ value for " + quoted(key) + " is " +
                 JsonReader::kindName(valueKind) + ", not a string");
        if (metadata.count(key)) fail("duplicate __metadata__ key " + quoted(key));
        metadata.emplace(key, reader.readString());
    });
}

TensorInfo HeaderParser::readTensor(JsonReader& reader, const std::string& name) {
    const auto kind = reader.peekKind();
    if (kind != JsonReader::Kind::Object)
        failTensor(name, std::string("entry is ") + JsonReader::kindName(kind) + ", not an object");
    TensorInfo tensor;
    tensor.name = name;
    std::set<std::string> seen;
    reader.readObject([&](const std::string& key) {
        if (!seen.insert(key).second) failTensor(name, "duplicate key " + quoted(key));
        if (key == "dtype")
            tensor.dtype = readDType(reader, name);
        else if (key == "shape")
            tensor.shape = readShape(reader, name);
        else if (key == "data_offsets")
            std::tie(tensor.begin, tensor.end) = readOffsets(reader, name);
        else
            reader.skipValue(); // unknown keys are allowed, as the reference reader allows them
    });
    for (const char* required : {"dtype", "shape", "data_offsets"})
        if (!seen.count(required)) failTensor(name, std::string("missing '") + required + "'");
    checkByteRange(tensor);
    return tensor;
}

DType HeaderParser::readDType(JsonReader& reader, const std::string& name) {
    const auto kind = reader.peekKind();
    if (kind != JsonReader::Kind::String)
        failTensor(name, std::string("dtype is ") + JsonReader::kindName(kind) + ", not a string");
    const std::string text = reader.readString();
    if (const auto dtype = parseDType(text)) return *dtype;
    failTensor(name, "unknown dtype " + quoted(clipped(text)) +
                         " (supported: " + supportedDTypes() + ")");
}

std::vector<int64_t> HeaderParser::readShape(JsonReader& reader, const std::string& name) {
    const auto kind = reader.peekKind();
    if (kind != JsonReader::Kind::Array)
        failTensor(name, std::string("shape is ") + JsonReader::kindName(kind) + ", not an array");
    std::vector<int64_t> shape;
    reader.readArray([&](std::size_t index) {
        if (index >= kMaxRank)
            failTensor(name, "shape has more than " + std::to_string(kMaxRank) + " dimensions");
        const std::string what = "shape[" + std::to_string(index) + "]";
        shape.push_back(static_cast<int64_t>(readExactInteger(reader, name, what)));
    });
    return shape;
}

std::pair<uint64_t, uint64_t> HeaderParser::readOffsets(JsonReader& reader,
                                                        const std::string& name) {
    const auto kind = reader.peekKind();
    if (kind != JsonReader::Kind::Array)
        failTensor(name, std::string("data_offsets is ") + JsonReader::kindName(kind) +
                             ", not an array [begin, end]");
    uint64_t offsets[2] = {0, 0};
    std::size_t count = 0;
    reader.readArray([&](std::size_t index) {
        if (index >= 2) failTensor(name, "data_offsets has more than two entries");
        offsets[index] =
            readExactInteger(reader, name, "data_offsets[" + std::to_string(index) + "]");
        count = index + 1;
    });
    if (count != 2) failTensor(name, "data_offsets has fewer than two entries");
    return {offsets[0], offsets[1]};
}

uint64_t HeaderParser::readExactInteger(JsonReader& reader, const std::string& name,
                                        const std::string& what) {
    const auto kind = reader.peekKind();
    if (kind != JsonReader::Kind::Number)
        failTensor(name, what + " is " + JsonReader::kindName(kind) + ", not an integer");
    const std::string_view literal = reader.readNumber();
    if (const auto value = exactUnsignedInteger(literal, kMaxJsonInteger)) return *value;
    failTensor(name, what + " must be an integer from 0 to 2^53, not " + clipped(literal));
}

// Checks, with no arithmetic that can overflow, that the byte range lies inside the data section
// and holds exactly shape × dtype size bytes.
void HeaderParser::checkByteRange(const TensorInfo& tensor) const {
    const std::string range = rangeString(tensor.begin, tensor.end);
    if (tensor.begin > tensor.end)
        failTensor(tensor.name, "data_offsets [" + std::to_string(tensor.begin) + ", " +
                                    std::to_string(tensor.end) + "] end before they begin");
    if (tensor.end > dataSize_)
        failTensor(tensor.name, "byte range " + range + " lies outside the " +
                                    std::to_string(dataSize_) + "-byte data section");
    const std::size_t elementSize = dtypeSize(tensor.dtype);
    int64_t elements = 0;
    try {
        elements = elementCount(tensor.shape);
    } catch (const std::exception&) {
        failTensor(tensor.name, "shape " + shapeString(tensor.shape) + " overflows 64 bits");
    }
    const auto count = static_cast<uint64_t>(elements);
    if (count > std::numeric_limits<uint64_t>::max() / elementSize)
        failTensor(tensor.name, "shape " + shapeString(tensor.shape) + " × " +
                                    dtypeName(tensor.dtype) + " overflows 64 bits");
    const uint64_t expected = count * elementSize;
    if (tensor.end - tensor.begin != expected)
        fail("tensor " + quoted(tensor.name) + " byte range " + range + " does not match shape " +
             shapeString(tensor.shape) + " × " + dtypeName(tensor.dtype) + " (" +
             std::to_string(expected) + " bytes)");
}

// Ranges are sorted by start; each non-empty one must begin at or after the furthest end so far.
// Empty tensors own no bytes and cannot overlap anything.
void checkNoOverlap(const std::string& path, const std::map<std::string, TensorInfo>& tensors) {
    std::vector<const TensorInfo*> sorted;
    for (const auto& [name, info] : tensors)
        if (info.end > info.begin) sorted.push_back(&info);
    std::sort(sorted.begin(), sorted.end(), [](const TensorInfo* a, const TensorInfo* b) {
        return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
    });
    const TensorInfo* furthest = nullptr;
    for (const TensorInfo* info : sorted) {
        if (furthest && info->begin < furthest->end)
            fail(path, "tensors " + quoted(furthest->name) + " " +
                           rangeString(furthest->begin, furthest->end) + " and " +
                           quoted(info->name) + " " + rangeString(info->begin, info->end) +
                           " overlap");
        if (!furthest || info->end > furthest->end) furthest = info;
    }
}
} // namespace

const char* dtypeName(DType dtype) {
    return entryOf(dtype).name;
}
std::size_t dtypeSize(DType dtype) {
    return entryOf(dtype).size;
}

namespace {
void checkLengthPrefixFits(const std::string& path, uint64_t size) {
    if (size < kLengthPrefixBytes)
        fail(path,
             "file is " + std::to_string(size) + " bytes, too short for the 8-byte header length");
}
} // namespace

// The file stays open while mapped: the mapping belongs to the QFile. As with any mapping, a
// file truncated by another process while open faults on access; the header checks cannot help.
// A file given as bytes (fromBytes) is owned here instead, and `file` stays closed.
struct SafetensorsFile::Mapping {
    QFile file;
    std::vector<std::byte> owned;
    std::span<const std::byte> bytes;

    Mapping(const std::string& name, std::span<const std::byte> copy)
        : owned(copy.begin(), copy.end()) {
        checkLengthPrefixFits(name, owned.size());
        bytes = owned;
    }

    explicit Mapping(const std::string& path)
        : file(QString::fromStdString(path)) {
        // Why check first: opening a FIFO or device would block or read forever.
        const QFileInfo info(file.fileName());
        if (!info.exists()) fail(path, "file does not exist");
        if (!info.isFile()) fail(path, "not a regular file");
        if (!file.open(QIODevice::ReadOnly))
            fail(path, "cannot open (" + file.errorString().toStdString() + ")");
        const qint64 size = file.size();
        checkLengthPrefixFits(path, static_cast<uint64_t>(size));
        const uchar* base = file.map(0, size);
        if (!base) fail(path, "cannot map into memory (" + file.errorString().toStdString() + ")");
        bytes = {reinterpret_cast<const std::byte*>(base), static_cast<std::size_t>(size)};
    }
};

SafetensorsFile::SafetensorsFile(const std::string& path)
    : path_(path)
    , mapping_(std::make_unique<Mapping>(path)) {
    validate();
}

SafetensorsFile::SafetensorsFile(std::string path, std::unique_ptr<Mapping> mapping)
    : path_(std::move(path))
    , mapping_(std::move(mapping)) {
    validate();
}

std::unique_ptr<SafetensorsFile> SafetensorsFile::fromBytes(const std::string& name,
                                                            std::span<const std::byte> file) {
    return std::unique_ptr<SafetensorsFile>(
        new SafetensorsFile(name, std::make_unique<Mapping>(name, file)));
}

void SafetensorsFile::validate() {
    const auto file = mapping_->bytes;
    const uint64_t headerLength = readU64LittleEndian(file.data());
    const uint64_t afterPrefix = file.size() - kLengthPrefixBytes;
    if (headerLength > kMaxHeaderBytes)
        fail(path_, "header length " + std::to_string(headerLength) + " exceeds the 100 MB limit");
    if (headerLength > afterPrefix)
        fail(path_, "header length " + std::to_string(headerLength) +
                        " runs past the end of the file (" + std::to_string(afterPrefix) +
                        " bytes follow the length)");
    const auto header = file.subspan(kLengthPrefixBytes, headerLength);
    data_ = file.subspan(kLengthPrefixBytes + headerLength);
    HeaderParser(path_, {reinterpret_cast<const char*>(header.data()), header.size()}, data_.size())
        .parse(tensors_, metadata_);
    checkNoOverlap(path_, tensors_);
}

SafetensorsFile::~SafetensorsFile() = default;

const TensorInfo& SafetensorsFile::info(const std::string& name) const {
    const auto found = tensors_.find(name);
    if (found == tensors_.end()) fail(path_, "missing tensor " + quoted(name));
    return found->second;
}

std::span<const std::byte> SafetensorsFile::bytes(const std::string& name) const {
    const TensorInfo& tensor = info(name);
    return data_.subspan(tensor.begin, tensor.end - tensor.begin);
}

Tensor SafetensorsFile::loadF32(const std::string& name) const {
    const TensorInfo& tensor = info(name);
    const auto raw = bytes(name);
    std::vector<float> values(raw.size() / dtypeSize(tensor.dtype));
    widenToF32(tensor.dtype, raw, values.data());
    return Tensor(tensor.shape, std::move(values));
}

std::vector<std::byte> SafetensorsFile::storedBytes(const std::string& name) const {
    const auto raw = bytes(name);
    return {raw.begin(), raw.end()};
}

std::vector<int64_t> SafetensorsFile::loadI64(const std::string& name) const {
    const TensorInfo& tensor = info(name);
    if (!isIntegerDType(tensor.dtype))
        fail(path_, "tensor " + quoted(name) + " is " + dtypeName(tensor.dtype) +
                        ", not an integer tensor");
    const auto raw = bytes(name);
    std::vector<int64_t> values(raw.size() / dtypeSize(tensor.dtype));
    widenToI64(tensor.dtype, raw, values.data());
    return values;
}

namespace {
// JSON string syntax for a name we write: quotes, backslashes and control characters escaped;
// other UTF-8 passes through (checked by the caller).
std::string jsonString(const std::string& text) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out = "\"";
    for (char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\')
            out += std::string("\\") + c;
        else if (byte < 0x20)
            out += std::string("\\u00") + kHex[byte >> 4] + kHex[byte & 0xF];
        else
            out += c;
    }
    return out + "\"";
}

bool isI64(const TensorToWrite& tensor) {
    return !tensor.i64.empty();
}

DType dtypeOf(const TensorToWrite& tensor) {
    if (tensor.storedDType) return *tensor.storedDType;
    return isI64(tensor) ? DType::I64 : DType::F32;
}

std::span<const char> rawBytes(const TensorToWrite& tensor) {
    if (tensor.storedDType)
        return {reinterpret_cast<const char*>(tensor.stored.data()), tensor.stored.size()};
    if (isI64(tensor))
        return {reinterpret_cast<const char*>(tensor.i64.data()),
                tensor.i64.size() * sizeof(int64_t)};
    return {reinterpret_cast<const char*>(tensor.f32.data()), tensor.f32.size() * sizeof(float)};
}

void checkUtf8(const std::string& path, const std::string& what, const std::string& text) {
    if (firstInvalidUtf8(text)) fail(path, what + " is not valid UTF-8");
}

void checkTensorsToWrite(const std::string& path, const std::vector<TensorToWrite>& tensors) {
    std::set<std::string> names;
    for (const auto& tensor : tensors) {
        checkUtf8(path, "a tensor name", tensor.name);
        if (tensor.name == kMetadataKey) fail(path, "a tensor may not be named __metadata__");
        if (!names.insert(tensor.name).second)
            fail(path, "duplicate tensor name " + quoted(tensor.name));
        if (int(!tensor.f32.empty()) + int(!tensor.i64.empty()) + int(!tensor.stored.empty()) > 1)
            fail(path, "tensor " + quoted(tensor.name) + " has values of more than one kind");
        int64_t expected = 0;
        try {
            expected = elementCount(tensor.shape);
        } catch (const std::exception& error) {
            fail(path, "tensor " + quoted(tensor.name) + ": " + error.what());
        }
        const std::size_t size = dtypeSize(dtypeOf(tensor));
        if (static_cast<uint64_t>(expected) * size != rawBytes(tensor).size())
            fail(path, "tensor " + quoted(tensor.name) + " of shape " + shapeString(tensor.shape) +
                           " has " + std::to_string(rawBytes(tensor).size() / size) + " values");
    }
}

// Wider elements go first in the data so that, with the data section starting 8-aligned, every
// tensor is aligned to its element size; the reference writer orders by alignment for the same
// reason, and leaves no gaps (its reader refuses gaps).
std::vector<const TensorToWrite*> dataOrder(const std::vector<TensorToWrite>& tensors) {
    std::vector<const TensorToWrite*> order;
    for (const auto& tensor : tensors)
        order.push_back(&tensor);
    std::stable_sort(order.begin(), order.end(),
                     [](const TensorToWrite* a, const TensorToWrite* b) {
                         return dtypeSize(dtypeOf(*a)) > dtypeSize(dtypeOf(*b));
                     });
    return order;
}

std::string headerJson(const std::vector<const TensorToWrite*>& order,
                       const std::map<std::string, std::string>& metadata) {
    std::string json = "{";
    if (!metadata.empty()) {
        json += jsonString(kMetadataKey) + ":{";
        for (auto it = metadata.begin(); it != metadata.end(); ++it)
            json += (it == metadata.begin() ? "" : ",") + jsonString(it->first) + ":" +
                    jsonString(it->second);
        json += "}";
    }
    uint64_t offset = 0;
    for (const TensorToWrite* tensor : order) {
        const uint64_t end = offset + rawBytes(*tensor).size();
        std::string shape;
        for (int64_t d : tensor->shape)
            shape += (shape.empty() ? "" : ",") + std::to_string(d);
        json += std::string(json.size() > 1 ? "," : "") + jsonString(tensor->name) +
                ":{\"dtype\":\"" + dtypeName(dtypeOf(*tensor)) + "\",\"shape\":[" + shape +
                "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(end) + "]}";
        offset = end;
    }
    json += "}";
    // Spaces (JSON whitespace) pad the header so the data section starts 8-aligned.
    json.append((8 - json.size() % 8) % 8, ' ');
    return json;
}

void writeAll(QSaveFile& file, const std::string& path, const char* data, std::size_t size) {
    if (size == 0) return;
    if (file.write(data, static_cast<qint64>(size)) != static_cast<qint64>(size))
        fail(path, "write failed (" + file.errorString().toStdString() + ")");
}
} // namespace

void writeSafetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                      const std::map<std::string, std::string>& metadata) {
    checkTensorsToWrite(path, tensors);
    for (const auto& [key, value] : metadata) {
        checkUtf8(path, "a metadata key", key);
        checkUtf8(path, "the metadata value for " + quoted(key), value);
    }
    const auto order = dataOrder(tensors);
    const std::string header = headerJson(order, metadata);
    if (header.size() > kMaxHeaderBytes) fail(path, "header would exceed the 100 MB limit");

    // QSaveFile writes a temporary file beside `path` and renames it over `path` on commit();
    // destroyed uncommitted (any throw below), it removes the temporary file.
    QSaveFile file(QString::fromStdString(path));
    if (!file.open(QIODevice::WriteOnly))
        fail(path, "cannot write (" + file.errorString().toStdString() + ")");
    const uint64_t length = header.size();
    writeAll(file, path, reinterpret_cast<const char*>(&length), sizeof length);
    writeAll(file, path, header.data(), header.size());
    for (const TensorToWrite* tensor : order) {
        const auto raw = rawBytes(*tensor);
        writeAll(file, path, raw.data(), raw.size());
    }
    if (!file.commit()) fail(path, "cannot write (" + file.errorString().toStdString() + ")");
}
} // namespace headlight::io
