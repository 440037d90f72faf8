#version 450
// activation: out[outBase + i] = act(x[xBase + i]) for i < n, act chosen by ACT (see
// activation.glsl). Shapes: any; the backend passes one row-aligned stretch of a tensor, and
// out may be x itself (each element is read before it is written, by the same invocation).
#extension GL_GOOGLE_include_directive : require
#include "activation.glsl"

layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint ACT = 0;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Out { float outValues[]; };
layout(push_constant) uniform Push { uint n, xBase, outBase; } p;

void main() {
    // Grid-stride: the dispatch is capped at the guaranteed 65535 workgroups.
    const uint stride = gl_NumWorkGroups.x * WG;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride)
        outValues[p.outBase + i] = activate(ACT, x[p.xBase + i]);
}
