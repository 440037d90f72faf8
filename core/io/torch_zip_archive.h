#pragma once
// The zip container of torch.save files (torch 1.6 and later), read in place from a mapped file.
// Only what torch's writer produces is accepted: stored (uncompressed), unencrypted entries on one
// disk, with ZIP64 records where sizes or offsets pass 4 GB. Every offset and size is checked
// against the file before use, entry names must be relative paths without "..", no two entries
// may share a name or overlap, and a stored entry's data lies before the central directory.
// Why our own reader and not libzip: a stored entry's data is mapped where it lies, so a tensor is
// never copied out of the archive, and libzip offers entries only as streams to read into a copy.

#include "io/tensor_file.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace headlight::io {

struct ZipEntry {
    std::string name;
    uint64_t headerOffset = 0; // where its local header starts
    uint64_t dataOffset = 0;   // where its stored bytes start
    uint64_t size = 0;
    uint32_t crc32 = 0;
};

class ZipArchive {
public:
    // Validates the central directory and every local header of `file` (the whole archive);
    // `path` names it in messages. Throws CheckpointError. `file` must outlive the archive.
    ZipArchive(const std::string& path, std::span<const std::byte> file);

    const std::vector<ZipEntry>& entries() const { return entries_; }
    const ZipEntry* find(const std::string& name) const; // nullptr when absent
    std::span<const std::byte> data(const ZipEntry& entry) const;
    // Throws CheckpointError when the entry's bytes do not match its CRC-32.
    void checkCrc(const ZipEntry& entry) const;

private:
    struct Directory {
        uint64_t offset = 0;
        uint64_t size = 0;
        uint64_t entries = 0;
        uint64_t end = 0; // where the records after the directory begin
    };
    Directory findDirectory() const;
    void readDirectory(const Directory& directory);
    void checkLocalHeader(ZipEntry& entry, uint64_t directoryOffset) const;
    void checkNoOverlap() const;

    std::string path_;
    std::span<const std::byte> file_;
    std::vector<ZipEntry> entries_;
    std::map<std::string, std::size_t> byName_;
};

// The CRC-32 of zip (and gzip, PNG): polynomial 0xEDB88320, reflected.
uint32_t crc32Of(std::span<const std::byte> bytes);
} // namespace headlight::io
