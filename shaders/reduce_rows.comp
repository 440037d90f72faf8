#version 450
// reduce_rows (Backend::reduceRows): out[r] = Σ_n x[r, n] (SUM) or max_n x[r, n], over the rows of
// one stretch: x [rows, N] from element xBase, out [rows] from element outBase. One workgroup per
// row (workgroup y = r); a strided partial per invocation, then workgroup_reduce.glsl.
#extension GL_GOOGLE_include_directive : require

layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const bool SUM = true;
layout(local_size_x_id = 0) in;
#include "workgroup_reduce.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Out { float outValues[]; };
layout(push_constant) uniform Push { uint N, xBase, outBase; } p;

void main() {
    const uint row = gl_WorkGroupID.y;
    const uint base = p.xBase + row * p.N;
    float partial = SUM ? 0.0 : -uintBitsToFloat(0x7f800000u);
    for (uint n = gl_LocalInvocationID.x; n < p.N; n += WG)
        partial = SUM ? partial + x[base + n] : max(partial, x[base + n]);
    const float total = SUM ? workgroupSum(partial) : workgroupMax(partial);
    if (gl_LocalInvocationID.x == 0) outValues[p.outBase + row] = total;
}
