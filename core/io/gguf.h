#pragma once
// A small, hardened reader of GGUF files (ggml's format: https://github.com/ggml-org/ggml,
// docs/gguf.md), enough for llama.cpp's control vectors: the header, the key-value metadata (kept
// when the value is a string, skipped otherwise) and F32 or F16 tensors, widened to f32.
//
// Layout (little-endian): "GGUF", version u32 (2 or 3; version 1's 32-bit counts are refused),
// tensor count u64, key-value count u64; each key-value: key (u64 length + bytes), type u32,
// value (scalars; string = u64 length + bytes; array = element type u32, count u64, elements);
// each tensor: name, dimension count u32, dimensions u64 (fastest first), ggml type u32, offset
// u64 into the data section; the data section starts at the header's end rounded up to
// general.alignment (default 32), and every offset is a multiple of it.
//
// Every count and length is checked against the bytes left and capped (kMax* in gguf.cpp) before
// anything is allocated, every tensor's bytes lie inside the data section, and any failure throws
// GgufError "<name>: <reason>" in one line.

#include "tensor/tensor.h"

#include <cstddef>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace headlight::io {

class GgufError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct GgufTensor {
    std::string name;
    std::vector<int64_t> dims; // ggml's order: dims[0] is the fastest-varying
    Tensor values;             // f32, shape = dims reversed (row-major)
};

struct GgufFile {
    uint32_t version = 0;
    std::map<std::string, std::string> strings; // the metadata's string values
    std::vector<GgufTensor> tensors;            // in the file's order
};

// Parses a whole file in memory; `name` stands for it in messages.
GgufFile parseGguf(std::span<const std::byte> bytes, const std::string& name);
// Reads `path` (a regular file of at most 256 MiB) and parses it.
GgufFile readGguf(const std::string& path);
} // namespace headlight::io
