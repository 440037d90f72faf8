// Weights kept in their stored 16-bit dtype (VulkanBackend::uploadStored on a device with
// storageBuffer16BitAccess): two values per uint, the lower-addressed one in the low half
// (little-endian), read as uints so that the shader needs no 16-bit types. Widening is exact:
// F16 and BF16 values are all f32 values. Dtypes (the shaders' W_DTYPE / TABLE_DTYPE
// specialization constants), in the order of vk::StoredDType:
const uint DTYPE_F32 = 0;  // a plain float buffer; the 16-bit readers below are not used
const uint DTYPE_F16 = 1;
const uint DTYPE_BF16 = 2; // the top half of an f32: its bits shifted into place

// Both values of one uint (the lower-addressed first).
vec2 widenPair(uint word, uint dtype) {
    if (dtype == DTYPE_F16) return unpackHalf2x16(word);
    return vec2(uintBitsToFloat(word << 16), uintBitsToFloat(word & 0xFFFF0000u));
}

// Element `index` of a 16-bit array held as uints in `words` (a macro: GLSL functions cannot
// take a buffer's unsized array).
#define WIDEN_ELEMENT(words, index, dtype) \
    (widenPair(words[(index) >> 1], dtype)[(index) & 1u])
