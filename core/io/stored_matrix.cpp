#include "io/stored_matrix.h"

#include "io/dtype_widening.h"

#include <cstring>

namespace headlight::io {
namespace {
// Every exponent bit set means Inf or NaN, in each float format.
template <typename Bits>
bool anyAllOnesExponent(const std::byte* at, std::size_t count, Bits mask) {
    for (std::size_t i = 0; i < count; ++i) {
        Bits bits;
        std::memcpy(&bits, at + i * sizeof(Bits), sizeof bits);
        if ((bits & mask) == mask) return true;
    }
    return false;
}
} // namespace

const float* StoredMatrix::directF32() const {
    const bool aligned = reinterpret_cast<std::uintptr_t>(bytes) % alignof(float) == 0;
    return dtype == DType::F32 && aligned ? reinterpret_cast<const float*>(bytes) : nullptr;
}

bool isMappableMatrix(DType dtype, std::size_t rank) {
    return rank == 2 && (dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16);
}

void widenRows(const StoredMatrix& matrix, int64_t first, int64_t count, float* out) {
    const std::size_t rowBytes = std::size_t(matrix.cols) * dtypeSize(matrix.dtype);
    widenToF32(matrix.dtype,
               {matrix.bytes + std::size_t(first) * rowBytes, std::size_t(count) * rowBytes}, out);
    if (matrix.dtype != DType::I8) return;
    for (int64_t r = 0; r < count; ++r) {
        const float scale = matrix.rowScales[first + r];
        float* row = out + r * matrix.cols;
        for (int64_t c = 0; c < matrix.cols; ++c)
            row[c] *= scale;
    }
}

bool allFinite(const StoredMatrix& matrix) {
    const std::size_t count = std::size_t(matrix.rows) * std::size_t(matrix.cols);
    switch (matrix.dtype) {
    case DType::F32:
        return !anyAllOnesExponent<uint32_t>(matrix.bytes, count, 0x7F800000u);
    case DType::F16:
        return !anyAllOnesExponent<uint16_t>(matrix.bytes, count, 0x7C00u);
    case DType::I8:
        return true; // integers; their scales are computed from finite weights
    default:
        return !anyAllOnesExponent<uint16_t>(matrix.bytes, count, 0x7F80u);
    }
}
} // namespace headlight::io
