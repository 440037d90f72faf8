#pragma once
// One NumPy .npy array (numpy/lib/format.py, format versions 1.0 to 3.0): the magic "\x93NUMPY",
// a version, a little-endian header length (2 bytes in 1.0, 4 after), and a header that is the
// repr of a Python dict {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with spaces
// and a newline; the elements follow, exactly prod(shape) of them. Only what an SAE release
// stores is read: little-endian floats '<f2', '<f4', '<f8' in C or Fortran order. The header is
// parsed as that dict literal and nothing else (no Python evaluation), every key exactly once;
// every length and the element count are checked against the bytes before use, and each failure
// throws CheckpointError naming `source` and the problem in one line.

#include "io/tensor_file.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace headlight::io {

struct NpyArray {
    DType dtype = DType::F32;
    std::vector<int64_t> shape;
    bool fortranOrder = false;           // column-major elements (numpy's fortran_order)
    std::span<const std::byte> elements; // prod(shape) · dtypeSize(dtype) bytes
};

// Parses `file` (a whole .npy); the returned span points into it.
NpyArray parseNpy(const std::string& source, std::span<const std::byte> file);

// The elements widened to f32 in row-major (C) order, whatever order the file used.
std::vector<float> npyToF32(const NpyArray& array);
} // namespace headlight::io
