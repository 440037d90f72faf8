#version 450
// rms_norm: out[t, :] = x[t, :] / sqrt(mean(x[t, :]²) + eps) · gamma (Llama's RMSNorm).
// Shapes: x, out [T, D] from rows xRow0 / outRow0 of their buffers; gamma [D] from element
// gammaBase (betaBase unused: one push layout for both norms). One workgroup per row
// (workgroup y = t - t0); out may be x itself: each invocation writes only elements it has read.
#extension GL_GOOGLE_include_directive : require

layout(constant_id = 0) const uint WG = 128;
layout(local_size_x_id = 0) in;
#include "workgroup_reduce.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Gamma { float gamma[]; };
layout(std430, binding = 2) writeonly buffer Out { float outValues[]; };
layout(push_constant) uniform Push { uint D, xRow0, outRow0, gammaBase, betaBase; float eps; } p;

void main() {
    const uint xBase = (p.xRow0 + gl_WorkGroupID.y) * p.D;
    const uint outBase = (p.outRow0 + gl_WorkGroupID.y) * p.D;
    const uint lid = gl_LocalInvocationID.x;
    float squares = 0.0;
    for (uint d = lid; d < p.D; d += WG) squares = fma(x[xBase + d], x[xBase + d], squares);
    const float inv = 1.0 / sqrt(workgroupSum(squares) / float(p.D) + p.eps);
    for (uint d = lid; d < p.D; d += WG)
        outValues[outBase + d] = x[xBase + d] * inv * gamma[p.gammaBase + d];
}
