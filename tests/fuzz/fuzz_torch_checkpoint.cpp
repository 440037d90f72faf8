// libFuzzer target: the torch.save reader (io::TorchCheckpointFile): the zip container, the
// restricted pickle interpreter, storages and views; then every accepted tensor read as f32.
//
// Input: a whole archive, or, when it starts with a pickle's PROTO opcode (0x80), a data.pkl that
// the target stores in an archive beside two 48-byte storages, data/0 and data/1. Why two forms:
// a mutation of a pickle inside a zip breaks its CRC-32 and sizes, so pickle fuzzing would stop
// at the container checks; the second form lets libFuzzer edit the pickle freely.
#include "fuzz_support.h"
#include "io/torch_checkpoint.h"
#include "io/torch_zip_archive.h"

#include <cstring>

using namespace headlight;

namespace {
void appendLittle(std::vector<std::byte>& out, uint64_t value, int width) {
    for (int i = 0; i < width; ++i)
        out.push_back(std::byte((value >> (8 * i)) & 0xFF));
}

void appendText(std::vector<std::byte>& out, std::string_view text) {
    for (char c : text)
        out.push_back(std::byte(c));
}

// A stored zip of `entries`, as torch's writer lays it out (without its alignment padding).
std::vector<std::byte> storedZip(const std::vector<std::pair<std::string, std::string>>& entries) {
    std::vector<std::byte> out, directory;
    for (const auto& [name, data] : entries) {
        const uint32_t crc = io::crc32Of(std::as_bytes(std::span(data.data(), data.size())));
        const uint64_t offset = out.size();
        for (auto* part : {&out, &directory}) {
            const bool central = part == &directory;
            appendLittle(*part, central ? 0x02014b50 : 0x04034b50, 4);
            if (central) appendLittle(*part, 20, 2); // version made by
            appendLittle(*part, 20, 2);              // version needed
            appendLittle(*part, 0, 2 + 2 + 4);       // flags, method, time and date
            appendLittle(*part, crc, 4);
            appendLittle(*part, data.size(), 4);
            appendLittle(*part, data.size(), 4);
            appendLittle(*part, name.size(), 2);
            appendLittle(*part, 0, 2);                      // extra length
            if (central) appendLittle(*part, 0, 2 + 2 + 2); // comment, disk, internal attributes
            if (central) appendLittle(*part, 0, 4);         // external attributes
            if (central) appendLittle(*part, offset, 4);
            appendText(*part, name);
        }
        appendText(out, data);
    }
    const uint64_t directoryOffset = out.size();
    out.insert(out.end(), directory.begin(), directory.end());
    appendLittle(out, 0x06054b50, 4);
    appendLittle(out, 0, 4);
    appendLittle(out, entries.size(), 2);
    appendLittle(out, entries.size(), 2);
    appendLittle(out, directory.size(), 4);
    appendLittle(out, directoryOffset, 4);
    appendLittle(out, 0, 2);
    return out;
}

std::vector<std::byte> archiveFromInput(const uint8_t* data, std::size_t size) {
    const auto* bytes = reinterpret_cast<const std::byte*>(data);
    if (size == 0 || data[0] != 0x80) return {bytes, bytes + size};
    std::string storage(48, '\0');
    for (int i = 0; i < 12; ++i) {
        const float value = float(i);
        std::memcpy(storage.data() + 4 * i, &value, 4);
    }
    return storedZip({{"archive/data.pkl", std::string(reinterpret_cast<const char*>(data), size)},
                      {"archive/data/0", storage},
                      {"archive/data/1", storage}});
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    const std::vector<std::byte> file = archiveFromInput(data, size);
    std::unique_ptr<io::TorchCheckpointFile> parsed;
    try {
        parsed = io::TorchCheckpointFile::fromBytes("fuzz.bin", file);
    } catch (const io::CheckpointError&) {
        return 0;
    }
    for (const auto& [name, info] : parsed->tensors()) {
        // What validation promised: the view's bytes lie inside the file.
        HEADLIGHT_FUZZ_CHECK(info.begin <= info.end && info.end <= file.size());
        const uint64_t elements = uint64_t(elementCount(info.shape));
        try {
            const Tensor values = parsed->loadF32(name);
            HEADLIGHT_FUZZ_CHECK(values.size() == elements);
            HEADLIGHT_FUZZ_CHECK(values.shape() == info.shape);
            HEADLIGHT_FUZZ_CHECK(parsed->storedBytes(name).size() ==
                                 elements * io::dtypeSize(info.dtype));
        } catch (const io::CheckpointError&) {
            // A storage whose CRC-32 does not match is refused when read.
        }
    }
    return 0;
}
