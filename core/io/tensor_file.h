#pragma once
// What a checkpoint folder's weight files have in common, whatever their format (safetensors, or
// the zip archives torch.save writes): a table of named tensors, each with a dtype and a shape,
// that can be read as f32. Checkpoint holds its files through this interface.

#include "tensor/tensor.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace headlight::io {

class CheckpointError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, Bool };
const char* dtypeName(DType dtype); // as safetensors spells it: "F32", "BF16", ...
std::size_t dtypeSize(DType dtype);

// A name from a file, quoted for a message: its first 200 bytes (cut at a UTF-8 character
// boundary) and "…", so that a hostile name cannot flood a terminal or a dialog.
std::string quotedName(std::string_view name);

struct TensorInfo {
    std::string name;
    DType dtype = DType::F32;
    std::vector<int64_t> shape;
    // The bytes the tensor's elements span: in a safetensors file, relative to the start of the
    // data section; in a torch archive, offsets in the archive file (a view with strides may skip
    // bytes inside the range, and views of one storage may share bytes).
    uint64_t begin = 0;
    uint64_t end = 0;
};

class TensorFile {
public:
    virtual ~TensorFile() = default;
    virtual const std::string& path() const = 0;
    virtual const std::map<std::string, TensorInfo>& tensors() const = 0;
    virtual const TensorInfo& info(const std::string& name) const = 0; // throws CheckpointError
    // The tensor widened to f32 (every float and integer dtype). Throws CheckpointError.
    virtual Tensor loadF32(const std::string& name) const = 0;
    // The tensor's elements in row-major order, in its stored dtype (what convert writes).
    virtual std::vector<std::byte> storedBytes(const std::string& name) const = 0;
};
} // namespace headlight::io
