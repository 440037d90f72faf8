#version 450
// layer_norm: out[t, :] = (x[t, :] - mean) / sqrt(var + eps) · gamma + beta, with mean and the
// biased variance var over the D values of row t. Shapes: x, out [T, D] from rows xRow0 /
// outRow0 of their buffers; gamma, beta [D] from elements gammaBase / betaBase.
// One workgroup per row (workgroup y = t - t0 of this row-aligned stretch). Two passes, the
// second over x - mean, as PyTorch does: one-pass E[x²] - mean² cancels badly for large means.
// out may be x itself: each invocation writes only elements it has read.
#extension GL_GOOGLE_include_directive : require

layout(constant_id = 0) const uint WG = 128;
layout(local_size_x_id = 0) in;
#include "workgroup_reduce.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Gamma { float gamma[]; };
layout(std430, binding = 2) readonly buffer Beta { float beta[]; };
layout(std430, binding = 3) writeonly buffer Out { float outValues[]; };
layout(push_constant) uniform Push { uint D, xRow0, outRow0, gammaBase, betaBase; float eps; } p;

void main() {
    const uint xBase = (p.xRow0 + gl_WorkGroupID.y) * p.D;
    const uint outBase = (p.outRow0 + gl_WorkGroupID.y) * p.D;
    const uint lid = gl_LocalInvocationID.x;
    float sum = 0.0;
    for (uint d = lid; d < p.D; d += WG) sum += x[xBase + d];
    const float mean = workgroupSum(sum) / float(p.D);
    float squares = 0.0;
    for (uint d = lid; d < p.D; d += WG) {
        const float c = x[xBase + d] - mean;
        squares = fma(c, c, squares);
    }
    const float inv = 1.0 / sqrt(workgroupSum(squares) / float(p.D) + p.eps);
    for (uint d = lid; d < p.D; d += WG) {
        const float normalized = (x[xBase + d] - mean) * inv;
        outValues[outBase + d] = fma(normalized, gamma[p.gammaBase + d], beta[p.betaBase + d]);
    }
}
