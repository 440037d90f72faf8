#version 450
// gated_activation: out[outBase + i] = act(gate[gateBase + i]) · up[upBase + i] for i < n
// (SwiGLU when ACT is SiLU). Shapes: gate, up, out [T, F]; out may be gate itself.
#extension GL_GOOGLE_include_directive : require
#include "activation.glsl"

layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint ACT = 3;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Gate { float gate[]; };
layout(std430, binding = 1) readonly buffer Up { float up[]; };
layout(std430, binding = 2) writeonly buffer Out { float outValues[]; };
layout(push_constant) uniform Push { uint n, gateBase, upBase, outBase; } p;

void main() {
    const uint stride = gl_NumWorkGroups.x * WG;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride)
        outValues[p.outBase + i] = activate(ACT, gate[p.gateBase + i]) * up[p.upBase + i];
}
