// libFuzzer target: the safetensors header and tensor table (io::SafetensorsFile), then every
// tensor read back as f32 and, for integer dtypes, as int64.
//
// Input: a whole file (8-byte length, header, data) or, when it starts with '{', the header JSON,
// a NUL, then the data section; the target writes the length itself. Why two forms: a mutation
// that grows the header breaks a stored length, so header fuzzing would mostly stop at the
// length checks; the second form lets libFuzzer edit the JSON freely.
#include "fuzz_support.h"
#include "io/safetensors.h"

#include <cstring>
#include <span>

using namespace headlight;

namespace {
std::vector<std::byte> fileFromInput(const uint8_t* data, std::size_t size) {
    if (size == 0 || data[0] != '{') {
        const auto* bytes = reinterpret_cast<const std::byte*>(data);
        return {bytes, bytes + size};
    }
    const auto parts = fuzz::splitAtNul(data, size, 2);
    const uint64_t length = parts[0].size();
    std::vector<std::byte> file(sizeof length);
    std::memcpy(file.data(), &length, sizeof length);
    for (const auto& part : parts)
        for (char c : part)
            file.push_back(std::byte(c));
    return file;
}

bool isInteger(io::DType dtype) {
    return dtype != io::DType::F64 && dtype != io::DType::F32 && dtype != io::DType::F16 &&
           dtype != io::DType::BF16;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    const std::vector<std::byte> file = fileFromInput(data, size);
    std::unique_ptr<io::SafetensorsFile> parsed;
    try {
        parsed = io::SafetensorsFile::fromBytes("fuzz.safetensors", file);
    } catch (const io::CheckpointError&) {
        return 0;
    }
    for (const auto& [name, info] : parsed->tensors()) {
        // What validation promised: the bytes are exactly shape × dtype and lie inside the file.
        const std::span<const std::byte> bytes = parsed->bytes(name);
        const uint64_t elements = uint64_t(elementCount(info.shape));
        HEADLIGHT_FUZZ_CHECK(bytes.size() == elements * io::dtypeSize(info.dtype));
        HEADLIGHT_FUZZ_CHECK(bytes.size() <= file.size());
        const Tensor values = parsed->loadF32(name);
        HEADLIGHT_FUZZ_CHECK(values.size() == elements);
        HEADLIGHT_FUZZ_CHECK(values.shape() == info.shape);
        if (isInteger(info.dtype)) {
            HEADLIGHT_FUZZ_CHECK(parsed->loadI64(name).size() == elements);
        } else {
            try {
                parsed->loadI64(name);
                HEADLIGHT_FUZZ_CHECK(false); // a float tensor read as integers must be refused
            } catch (const io::CheckpointError&) {
            }
        }
    }
    try {
        parsed->info("no such tensor \x01");
        HEADLIGHT_FUZZ_CHECK(false);
    } catch (const io::CheckpointError&) {
    }
    return 0;
}
