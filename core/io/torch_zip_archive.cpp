#include "io/torch_zip_archive.h"

#include <algorithm>
#include <array>

namespace headlight::io {
namespace {
constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr uint64_t kEndBytes = 22;
constexpr uint64_t kZip64LocatorBytes = 20;
constexpr uint64_t kZip64EndBytes = 56;
constexpr uint64_t kCentralHeaderBytes = 46;
constexpr uint64_t kLocalHeaderBytes = 30;
constexpr uint64_t kMaxCommentBytes = 0xFFFF;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kEncryptedFlags = 0x0001 | 0x0040; // traditional and strong encryption
constexpr uint16_t kStored = 0;
constexpr uint32_t kSaturated32 = 0xFFFFFFFF;
constexpr uint16_t kSaturated16 = 0xFFFF;

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
    throw CheckpointError(path + ": " + problem);
}

// Little-endian fields read with their bounds checked against the whole file.
class Fields {
public:
    Fields(const std::string& path, std::span<const std::byte> file)
        : path_(path)
        , file_(file) {}

    bool fits(uint64_t offset, uint64_t size) const {
        return offset <= file_.size() && size <= file_.size() - offset;
    }
    void require(uint64_t offset, uint64_t size, const std::string& what) const {
        if (!fits(offset, size))
            fail(path_, what + " at byte " + std::to_string(offset) + " runs past the end of the " +
                            std::to_string(file_.size()) + "-byte file");
    }
    uint64_t read(uint64_t offset, int width) const {
        uint64_t value = 0;
        for (int i = width - 1; i >= 0; --i)
            value = (value << 8) | static_cast<uint8_t>(file_[offset + uint64_t(i)]);
        return value;
    }
    uint16_t u16(uint64_t offset) const { return static_cast<uint16_t>(read(offset, 2)); }
    uint32_t u32(uint64_t offset) const { return static_cast<uint32_t>(read(offset, 4)); }
    uint64_t u64(uint64_t offset) const { return read(offset, 8); }
    std::string text(uint64_t offset, uint64_t size) const {
        return {reinterpret_cast<const char*>(file_.data() + offset), std::size_t(size)};
    }

private:
    const std::string& path_;
    std::span<const std::byte> file_;
};

// A name torch writes ("archive/data/0") is a relative path of plain components; anything that
// could escape a folder if extracted, or alias another entry, is refused.
bool isSafeEntryName(const std::string& name) {
    if (name.empty() || name.front() == '/' || name.back() == '/') return false;
    if (name.find_first_of(std::string("\\:\0", 3)) != std::string::npos) return false;
    std::size_t start = 0;
    while (start <= name.size()) {
        const std::size_t slash = std::min(name.find('/', start), name.size());
        const std::string part = name.substr(start, slash - start);
        if (part.empty() || part == "." || part == "..") return false;
        start = slash + 1;
    }
    return true;
}

// The values a ZIP64 extra field replaces, in the order the format stores them.
struct Zip64Values {
    uint64_t uncompressed;
    uint64_t compressed;
    uint64_t headerOffset;
};

// Slicing-by-8 (Kounavis and Berry, 2008): table k gives the CRC of a byte followed by k zero
// bytes, so eight bytes fold in one step. Why: a Gemma Scope params.npz of 300 MB is checked
// whole, and byte at a time that took seconds.
using CrcTables = std::array<std::array<uint32_t, 256>, 8>;

const CrcTables& crcTables() {
    static const CrcTables tables = [] {
        CrcTables made{};
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t value = i;
            for (int bit = 0; bit < 8; ++bit)
                value = (value & 1) ? 0xEDB88320u ^ (value >> 1) : value >> 1;
            made[0][i] = value;
        }
        for (std::size_t k = 1; k < made.size(); ++k)
            for (uint32_t i = 0; i < 256; ++i)
                made[k][i] = (made[k - 1][i] >> 8) ^ made[0][made[k - 1][i] & 0xFF];
        return made;
    }();
    return tables;
}

uint32_t crcWord(std::span<const std::byte> bytes, std::size_t at) {
    uint32_t value = 0;
    for (int i = 3; i >= 0; --i)
        value = (value << 8) | static_cast<uint8_t>(bytes[at + std::size_t(i)]);
    return value;
}
} // namespace

uint32_t crc32Of(std::span<const std::byte> bytes) {
    const CrcTables& t = crcTables();
    uint32_t crc = 0xFFFFFFFFu;
    std::size_t at = 0;
    for (; bytes.size() - at >= 8; at += 8) {
        const uint32_t one = crc ^ crcWord(bytes, at), two = crcWord(bytes, at + 4);
        crc = t[7][one & 0xFF] ^ t[6][(one >> 8) & 0xFF] ^ t[5][(one >> 16) & 0xFF] ^
              t[4][one >> 24] ^ t[3][two & 0xFF] ^ t[2][(two >> 8) & 0xFF] ^
              t[1][(two >> 16) & 0xFF] ^ t[0][two >> 24];
    }
    for (; at < bytes.size(); ++at)
        crc = t[0][(crc ^ static_cast<uint8_t>(bytes[at])) & 0xFF] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

ZipArchive::ZipArchive(const std::string& path, std::span<const std::byte> file)
    : path_(path)
    , file_(file) {
    readDirectory(findDirectory());
    checkNoOverlap();
}

// The end record is the last 22 bytes plus a comment of up to 64 kB; the one whose comment
// length reaches exactly the end of the file is the real one (a comment may contain the
// signature). A ZIP64 locator just before it points at the ZIP64 end record.
ZipArchive::Directory ZipArchive::findDirectory() const {
    const Fields fields(path_, file_);
    const uint64_t size = file_.size();
    if (size < kEndBytes) fail(path_, "too short for a zip archive");
    uint64_t end = size - kEndBytes;
    const uint64_t lowest = end > kMaxCommentBytes ? end - kMaxCommentBytes : 0;
    while (!(fields.u32(end) == kEndSignature && end + kEndBytes + fields.u16(end + 20) == size)) {
        if (end == lowest) fail(path_, "no zip end-of-central-directory record");
        --end;
    }
    if (fields.u16(end + 4) != 0 || fields.u16(end + 6) != 0)
        fail(path_, "a multi-disk (split) zip archive, which torch.save never writes");
    Directory directory{fields.u32(end + 16), fields.u32(end + 12), fields.u16(end + 10), end};
    const bool saturated = directory.offset == kSaturated32 || directory.size == kSaturated32 ||
                           directory.entries == kSaturated16;
    const bool hasLocator =
        end >= kZip64LocatorBytes && fields.u32(end - kZip64LocatorBytes) == kZip64LocatorSignature;
    if (!hasLocator) {
        if (saturated) fail(path_, "ZIP64 sizes without a ZIP64 end record");
        return directory;
    }
    const uint64_t locator = end - kZip64LocatorBytes;
    if (fields.u32(locator + 4) != 0 || fields.u32(locator + 16) != 1)
        fail(path_, "a multi-disk (split) zip archive, which torch.save never writes");
    const uint64_t record = fields.u64(locator + 8);
    if (record > locator || locator - record < kZip64EndBytes ||
        fields.u32(record) != kZip64EndSignature)
        fail(path_, "the ZIP64 locator points at byte " + std::to_string(record) +
                        ", not at a ZIP64 end record before it");
    if (fields.u32(record + 16) != 0 || fields.u32(record + 20) != 0)
        fail(path_, "a multi-disk (split) zip archive, which torch.save never writes");
    return {fields.u64(record + 48), fields.u64(record + 40), fields.u64(record + 32), record};
}

void ZipArchive::readDirectory(const Directory& directory) {
    const Fields fields(path_, file_);
    if (directory.offset > directory.end || directory.size > directory.end - directory.offset)
        fail(path_, "the central directory [" + std::to_string(directory.offset) + ", +" +
                        std::to_string(directory.size) + ") does not lie before its end record");
    if (directory.entries > directory.size / kCentralHeaderBytes)
        fail(path_, "the end record claims " + std::to_string(directory.entries) +
                        " entries, more than the central directory's " +
                        std::to_string(directory.size) + " bytes can hold");
    const uint64_t directoryEnd = directory.offset + directory.size;
    uint64_t at = directory.offset;
    for (uint64_t i = 0; i < directory.entries; ++i) {
        if (directoryEnd - at < kCentralHeaderBytes || fields.u32(at) != kCentralHeaderSignature)
            fail(path_, "central directory entry " + std::to_string(i) + " is malformed");
        const uint16_t flags = fields.u16(at + 8);
        const uint16_t method = fields.u16(at + 10);
        const uint64_t nameLength = fields.u16(at + 28);
        const uint64_t extraLength = fields.u16(at + 30);
        const uint64_t commentLength = fields.u16(at + 32);
        if (directoryEnd - at - kCentralHeaderBytes < nameLength + extraLength + commentLength)
            fail(path_,
                 "central directory entry " + std::to_string(i) + " runs past the directory");
        ZipEntry entry;
        entry.name = fields.text(at + kCentralHeaderBytes, nameLength);
        if (!isSafeEntryName(entry.name))
            fail(path_, "entry name " + quotedName(entry.name) +
                            " is not a plain relative path (absolute, '..', '\\' or empty parts)");
        if (!byName_.emplace(entry.name, entries_.size()).second)
            fail(path_, "entry " + quotedName(entry.name) + " appears twice");
        if (flags & kEncryptedFlags)
            fail(path_, "entry " + quotedName(entry.name) + " is encrypted");
        if (method != kStored)
            fail(path_, "entry " + quotedName(entry.name) + " is compressed (method " +
                            std::to_string(method) +
                            "); torch.save stores entries uncompressed, and only such are read");
        if (fields.u16(at + 34) != 0)
            fail(path_, "entry " + quotedName(entry.name) + " is on another disk");
        Zip64Values values{fields.u32(at + 24), fields.u32(at + 20), fields.u32(at + 42)};
        uint64_t extra = at + kCentralHeaderBytes + nameLength;
        const uint64_t extraEnd = extra + extraLength;
        while (extraEnd - extra >= 4) {
            const uint16_t id = fields.u16(extra);
            const uint64_t length = fields.u16(extra + 2);
            if (extraEnd - extra - 4 < length)
                fail(path_,
                     "entry " + quotedName(entry.name) + ": an extra field runs past its header");
            if (id == kZip64ExtraId) {
                uint64_t field = extra + 4;
                for (uint64_t* value :
                     {&values.uncompressed, &values.compressed, &values.headerOffset}) {
                    if (*value != kSaturated32) continue;
                    if (field + 8 > extra + 4 + length)
                        fail(path_,
                             "entry " + quotedName(entry.name) + ": ZIP64 extra field too short");
                    *value = fields.u64(field);
                    field += 8;
                }
            }
            extra += 4 + length;
        }
        if (values.compressed != values.uncompressed)
            fail(path_, "entry " + quotedName(entry.name) + " is stored but its sizes differ (" +
                            std::to_string(values.compressed) + " and " +
                            std::to_string(values.uncompressed) + ")");
        entry.headerOffset = values.headerOffset;
        entry.size = values.uncompressed;
        entry.crc32 = fields.u32(at + 16);
        checkLocalHeader(entry, directory.offset);
        entries_.push_back(std::move(entry));
        at += kCentralHeaderBytes + nameLength + extraLength + commentLength;
    }
}

void ZipArchive::checkLocalHeader(ZipEntry& entry, uint64_t directoryOffset) const {
    const Fields fields(path_, file_);
    const std::string what = "entry " + quotedName(entry.name);
    if (entry.headerOffset > directoryOffset ||
        directoryOffset - entry.headerOffset < kLocalHeaderBytes ||
        fields.u32(entry.headerOffset) != kLocalHeaderSignature)
        fail(path_, what + ": no local header at byte " + std::to_string(entry.headerOffset));
    const uint64_t at = entry.headerOffset;
    if (fields.u16(at + 6) & kEncryptedFlags) fail(path_, what + " is encrypted");
    if (fields.u16(at + 8) != kStored) fail(path_, what + " is compressed in its local header");
    const uint64_t nameLength = fields.u16(at + 26);
    const uint64_t extraLength = fields.u16(at + 28);
    const uint64_t headerEnd = at + kLocalHeaderBytes + nameLength + extraLength;
    if (headerEnd > directoryOffset)
        fail(path_, what + ": local header runs into the central directory");
    if (fields.text(at + kLocalHeaderBytes, nameLength) != entry.name)
        fail(path_, what + ": its local header names another entry");
    entry.dataOffset = headerEnd;
    if (entry.size > directoryOffset - headerEnd)
        fail(path_, what + ": its " + std::to_string(entry.size) + " bytes at byte " +
                        std::to_string(headerEnd) + " run into the central directory");
}

// Overlapping entries are how zip bombs multiply data and how one name could hide another's bytes.
void ZipArchive::checkNoOverlap() const {
    std::vector<const ZipEntry*> order;
    for (const ZipEntry& entry : entries_)
        order.push_back(&entry);
    std::sort(order.begin(), order.end(), [](const ZipEntry* a, const ZipEntry* b) {
        return a->headerOffset < b->headerOffset;
    });
    for (std::size_t i = 1; i < order.size(); ++i)
        if (order[i - 1]->dataOffset + order[i - 1]->size > order[i]->headerOffset)
            fail(path_, "entries " + quotedName(order[i - 1]->name) + " and " +
                            quotedName(order[i]->name) + " overlap");
}

const ZipEntry* ZipArchive::find(const std::string& name) const {
    const auto found = byName_.find(name);
    return found == byName_.end() ? nullptr : &entries_[found->second];
}

std::span<const std::byte> ZipArchive::data(const ZipEntry& entry) const {
    return file_.subspan(entry.dataOffset, entry.size);
}

void ZipArchive::checkCrc(const ZipEntry& entry) const {
    if (crc32Of(data(entry)) != entry.crc32)
        fail(path_, "entry " + quotedName(entry.name) + " does not match its CRC-32 (corrupted)");
}
} // namespace headlight::io
