#pragma once
// Widening stored tensor elements (little-endian, possibly unaligned in a mapped file) to the
// host's f32 or int64, exactly: F16 and BF16 are subsets of f32, so no value changes. Shared by
// every weight-file format so that the same bytes give the same floats whatever the container.

#include "io/tensor_file.h"

#include <cstddef>
#include <cstdint>
#include <span>

namespace headlight::io {

// `raw` holds raw.size() / dtypeSize(dtype) elements; `out` has room for as many.
void widenToF32(DType dtype, std::span<const std::byte> raw, float* out);
// Integer dtypes (I64 … U8, Bool) only; any other dtype is a logic error.
void widenToI64(DType dtype, std::span<const std::byte> raw, int64_t* out);
} // namespace headlight::io
