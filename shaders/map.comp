#version 450
// map (Backend::map): out[outBase + i] = f(alpha · x[xBase + i] + beta) for i < n, the affine
// part rounded once (as std::fma on the CPU), f chosen by OP in the order of headlight::MapOp:
// 0 affine, 1 exp, 2 elu + 1, 3 relu, 4 sigmoid, 5 cos, 6 sin, 7 square, 8 sqrt, 9 log, 10 tanh.
// out may be x itself (each element is read before it is written, by the same invocation).
// The transcendentals come from accurate_math.glsl: driver versions (lavapipe's exp is good to
// ~1e-6, its sin and cos lose absolute accuracy as |y| grows) would not match the CPU's libm.
#extension GL_GOOGLE_include_directive : require
#include "accurate_math.glsl"

layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint OP = 0;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Out { float outValues[]; };
layout(push_constant) uniform Push { uint n, xBase, outBase; float alpha, beta; } p;

float f(float y) {
    if (OP == 0) return y;
    if (OP == 1) return expAnyRange(y);
    if (OP == 2) return y > 0.0 ? y + 1.0 : expAnyRange(y);
    if (OP == 3) return y > 0.0 ? y : 0.0;
    if (OP == 4) return 1.0 / (1.0 + expAnyRange(-y));
    if (OP == 5) return cosAccurate(y);
    if (OP == 6) return sinAccurate(y);
    if (OP == 7) return y * y;
    if (OP == 8) return sqrt(y);
    if (OP == 9) return logAccurate(y);
    return tanhAccurate(y);
}

// alpha·x + beta rounded once, as the CPU's std::fma: one rounding whatever the device's fma().
// With alpha = 1 or beta = 0 a single operation is exact already (the common cases).
float affine(float x) {
    if (p.alpha == 1.0) return x + p.beta;
    if (p.beta == 0.0) return p.alpha * x;
    return fmaExact(p.alpha, x, p.beta);
}

void main() {
    const uint stride = gl_NumWorkGroups.x * WG;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        outValues[p.outBase + i] = f(affine(x[p.xBase + i]));
    }
}
