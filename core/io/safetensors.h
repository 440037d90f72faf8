#pragma once
// Safetensors files (https://huggingface.co/docs/safetensors): an 8-byte little-endian header
// length, a JSON header naming each tensor's dtype, shape and byte range, then the raw data.
// Files are mapped, never read whole. The header is validated before any use: its length is
// bounded (100 MB) and inside the file, the JSON is well-formed UTF-8, dtypes are known, every
// range lies inside the data and no two overlap, shape × dtype size equals the range, and no
// arithmetic overflows. Any failure throws CheckpointError naming the file and the problem.

#include "io/tensor_file.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace headlight::io {

class SafetensorsFile : public TensorFile {
public:
    // Maps and validates `path`; throws CheckpointError.
    explicit SafetensorsFile(const std::string& path);
    // Validates a copy of a whole file already in memory, with `name` standing for the path in
    // messages. Why: the fuzzer drives the parser at memory speed, with no file per input.
    static std::unique_ptr<SafetensorsFile> fromBytes(const std::string& name,
                                                      std::span<const std::byte> file);
    ~SafetensorsFile();
    SafetensorsFile(const SafetensorsFile&) = delete;
    SafetensorsFile& operator=(const SafetensorsFile&) = delete;

    const std::string& path() const override { return path_; }
    const std::map<std::string, TensorInfo>& tensors() const override { return tensors_; }
    const std::map<std::string, std::string>& metadata() const { return metadata_; }
    bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
    const TensorInfo& info(const std::string& name) const override; // throws CheckpointError

    // The tensor widened to f32 (F32, F16, BF16, F64, integer types). Throws CheckpointError.
    Tensor loadF32(const std::string& name) const override;
    std::vector<std::byte> storedBytes(const std::string& name) const override;
    // Integer tensors (I64, I32, ...) as int64.
    std::vector<int64_t> loadI64(const std::string& name) const;
    // The raw bytes of a tensor, inside the mapping.
    std::span<const std::byte> bytes(const std::string& name) const;

private:
    struct Mapping;
    SafetensorsFile(std::string path, std::unique_ptr<Mapping> mapping);
    void validate(); // the header checks, shared by both ways in
    std::string path_;
    std::unique_ptr<Mapping> mapping_;
    std::span<const std::byte> data_; // the data section
    std::map<std::string, TensorInfo> tensors_;
    std::map<std::string, std::string> metadata_;
};

// A tensor to write: f32 values, int64 values, or elements already in a stored dtype, with a
// shape.
struct TensorToWrite {
    std::string name;
    std::vector<int64_t> shape;
    std::vector<float> f32;   // used when i64 is empty and storedDType unset
    std::vector<int64_t> i64; // written as I64
    // When set, `stored` holds the elements in this dtype's little-endian bytes, written as they
    // are (convert copies F16 and BF16 weights without widening them).
    std::optional<DType> storedDType;
    std::vector<std::byte> stored;
};

// Writes a safetensors file atomically (a temporary file renamed over `path` on success; nothing
// is left behind on failure). Throws CheckpointError with the path and the reason.
void writeSafetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                      const std::map<std::string, std::string>& metadata = {});
} // namespace headlight::io
