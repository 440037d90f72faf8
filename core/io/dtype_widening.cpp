#include "io/dtype_widening.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>

#ifdef __F16C__
#include <immintrin.h>
#endif

namespace headlight::io {
namespace {
template <typename T> T loadUnaligned(const std::byte* at) {
    T value;
    std::memcpy(&value, at, sizeof value);
    return value;
}

// IEEE 754 binary16 → binary32, exact for every input: normals rebias the exponent, subnormals
// (exponent 0) are mantissa × 2^-24, and the all-ones exponent keeps inf and NaN (payload too).
float halfToFloat(uint16_t half) {
    const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
    const uint32_t exponent = (half >> 10) & 0x1Fu;
    const uint32_t mantissa = half & 0x3FFu;
    if (exponent == 0) {
        const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// bfloat16 is the top half of a binary32, so widening is a shift.
float bfloat16ToFloat(uint16_t bits) {
    return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

template <typename Stored, typename Out, typename Convert>
void widen(std::span<const std::byte> raw, Out* out, Convert convert) {
    const std::size_t count = raw.size() / sizeof(Stored);
    for (std::size_t i = 0; i < count; ++i)
        out[i] = convert(loadUnaligned<Stored>(raw.data() + i * sizeof(Stored)));
}

template <typename Out> void widenInteger(DType dtype, std::span<const std::byte> raw, Out* out) {
    const auto cast = [](auto value) { return static_cast<Out>(value); };
    switch (dtype) {
    case DType::I64:
        widen<int64_t>(raw, out, cast);
        return;
    case DType::I32:
        widen<int32_t>(raw, out, cast);
        return;
    case DType::I16:
        widen<int16_t>(raw, out, cast);
        return;
    case DType::I8:
        widen<int8_t>(raw, out, cast);
        return;
    case DType::U8:
        widen<uint8_t>(raw, out, cast);
        return;
    case DType::Bool:
        widen<uint8_t>(raw, out, [](uint8_t b) { return static_cast<Out>(b != 0); });
        return;
    default:
        throw std::logic_error("not an integer dtype");
    }
}

// F16 in bulk: the CPU's own conversion where it has one (F16C, exact for every finite value),
// eight at a time; the GEMM widens its weight panels through here (backend/cpu/cpu_gemm.h).
void widenHalves(std::span<const std::byte> raw, float* out) {
    std::size_t done = 0;
#ifdef __F16C__
    const std::size_t count = raw.size() / sizeof(uint16_t);
    for (; done + 8 <= count; done += 8)
        _mm256_storeu_ps(out + done, _mm256_cvtph_ps(_mm_loadu_si128(
                                         reinterpret_cast<const __m128i*>(raw.data() + 2 * done))));
#endif
    widen<uint16_t>(raw.subspan(2 * done), out + done, halfToFloat);
}
} // namespace

void widenToF32(DType dtype, std::span<const std::byte> raw, float* out) {
    const auto same = [](auto value) { return static_cast<float>(value); };
    switch (dtype) {
    case DType::F32:
        widen<float>(raw, out, same);
        return;
    case DType::F64:
        widen<double>(raw, out, same);
        return;
    case DType::F16:
        widenHalves(raw, out);
        return;
    case DType::BF16:
        widen<uint16_t>(raw, out, bfloat16ToFloat);
        return;
    default:
        widenInteger(dtype, raw, out);
        return;
    }
}

void widenToI64(DType dtype, std::span<const std::byte> raw, int64_t* out) {
    widenInteger(dtype, raw, out);
}
} // namespace headlight::io
