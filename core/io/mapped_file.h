#pragma once
// A weight file mapped read-only into memory. Only regular files are opened: a FIFO or a device
// under a weights name would block or read forever. As with any mapping, a file truncated by
// another process while mapped faults on access; no check at open time can prevent that.

#include <QFile>
#include <cstddef>
#include <span>
#include <string>

namespace headlight::io {

class MappedFile {
public:
    // Throws CheckpointError "<path>: <reason>".
    explicit MappedFile(const std::string& path);
    std::span<const std::byte> bytes() const { return bytes_; }

private:
    QFile file_; // the mapping belongs to the open file
    std::span<const std::byte> bytes_;
};
} // namespace headlight::io
