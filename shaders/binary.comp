#version 450
// binary (Backend::binary, and add): out[outBase + i] = a[aBase + i] ∘ b[j] for i < n, over one
// stretch of a (out may be a itself: each element is read before it is written, by the same
// invocation). OP: 0 add, 1 sub, 2 mul, 3 div (headlight::BinaryOp). How i finds b (BMODE):
//   0 aligned  j = bBase + i                        (b has a's size, walked alongside it)
//   1 repeat   j = bBase + (bStart + i) % bPeriod   (b's rows repeat; bStart: the stretch's
//                                                    first element index modulo bPeriod)
//   2 per row  j = bBase + i / cols                 (b [M, 1]: one value per row of a)
// BMODE is a specialization constant so that the common aligned and repeating adds pay no index
// arithmetic beyond their own (an integer division per element costs more than the add).
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint BMODE = 0;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Out { float outValues[]; };
layout(push_constant) uniform Push { uint n, aBase, bBase, outBase, bStart, bPeriod, cols; } p;

float apply(float x, float y) {
    if (OP == 0) return x + y;
    if (OP == 1) return x - y;
    if (OP == 2) return x * y;
    return x / y;
}

uint bIndex(uint i) {
    if (BMODE == 0) return p.bBase + i;
    if (BMODE == 1) return p.bBase + (p.bStart + i) % p.bPeriod;
    return p.bBase + i / p.cols;
}

void main() {
    // Grid-stride: the dispatch is capped at the guaranteed 65535 workgroups.
    const uint stride = gl_NumWorkGroups.x * WG;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride)
        outValues[p.outBase + i] = apply(a[p.aBase + i], b[bIndex(i)]);
}
