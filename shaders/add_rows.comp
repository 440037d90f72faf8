#version 450
// add_rows: out[M, N] = a[M, N] + b[R, N], b's rows repeating (R divides M). Covers n elements
// of one row-aligned stretch:  out[outBase + i] = a[aBase + i] + b[j],  with
//   j = bBase + i                  when `aligned` (b has a's shape and is chunked alongside it),
//   j = bBase + (bStart + i) % bLength   otherwise (b whole in one buffer from element bBase;
//                                         bStart = index of the stretch's first element % bLength).
// out may be a itself (each element is read before it is written, by the same invocation).
layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Out { float outValues[]; };
layout(push_constant) uniform Push { uint n, aBase, bBase, outBase, bStart, bLength, aligned; } p;

void main() {
    // Grid-stride: the dispatch is capped at the guaranteed 65535 workgroups.
    const uint stride = gl_NumWorkGroups.x * WG;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        const uint j = p.aligned != 0 ? p.bBase + i : p.bBase + (p.bStart + i) % p.bLength;
        outValues[p.outBase + i] = a[p.aBase + i] + b[j];
    }
}
