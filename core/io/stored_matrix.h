#pragma once
// A 2-D weight as its checkpoint stores it: row-major [rows, cols] elements in F32, F16 or BF16,
// inside a file mapped read-only. Why: a Llama-3.1-8B-shaped checkpoint is 16 GB in BF16 and
// 32 GB widened to f32; left in the mapping, the kernel pages it in and out as the file's own
// pages, and each GEMM widens one small panel at a time (backend/cpu/cpu_gemm.h).

#include "io/tensor_file.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace headlight::io {

// I8 is the weight-only quantisation of `--weights int8` (model/weight_quantization.h): held in
// memory, not mapped, one f32 scale per row (output channel), value = q · rowScales[row].
struct StoredMatrix {
    DType dtype = DType::F32;           // F32, F16, BF16, or I8 with rowScales
    const std::byte* bytes = nullptr;   // rows · cols elements, little-endian, maybe unaligned
    int64_t rows = 0;
    int64_t cols = 0;
    std::shared_ptr<const void> mapping; // keeps the file mapped (or the I8 data alive)
    const float* rowScales = nullptr;    // [rows], I8 only

    bool valid() const { return bytes != nullptr; }
    std::vector<int64_t> shape() const { return {rows, cols}; }
    double storedBytes() const { return double(rows) * double(cols) * double(dtypeSize(dtype)); }
    // The rows · cols f32 values, 4-byte aligned, when the file stores exactly those (F32).
    const float* directF32() const;
};

// Whether a tensor of this dtype and rank can stay in its file as a StoredMatrix.
bool isMappableMatrix(DType dtype, std::size_t rank);

// Rows [first, first + count) widened exactly to f32 into out (count · cols floats); I8 rows
// are scaled by their rowScales.
void widenRows(const StoredMatrix& matrix, int64_t first, int64_t count, float* out);

// False when any element is NaN or ±Inf; read from the stored bits, nothing is widened.
bool allFinite(const StoredMatrix& matrix);
} // namespace headlight::io
