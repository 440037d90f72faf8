#version 450
// softmax (Backend::softmax): out[r, :] = softmax(s[r, :]) over the N values of each row, with
//   s[r, n] = lowest f32 where mask[(maskStart + r) % maskPeriod, n] == 0 (when hasMask),
//   s[r, n] = x[r, n] otherwise
// (Hugging Face semantics: a row whose scores are all masked is uniform, never NaN).
// With hasSink (Backend::sinkSoftmax) one more logit `sink` joins each row's max and normaliser
// and is then dropped: out = e^(s - M) / (e^(sink - M) + sum e^(s - M)), M = max(max s, sink), so
// a fully masked row becomes 0.
// Shapes: one stretch of rows, x and out [rows, N] from elements xBase / outBase; mask [Rm, N]
// from element maskBase. One workgroup per row (workgroup y = r): max, sum of exponentials, then
// the normalized values; out may be x itself (each invocation writes only what it has read).
#extension GL_GOOGLE_include_directive : require

layout(constant_id = 0) const uint WG = 128;
layout(local_size_x_id = 0) in;
#include "workgroup_reduce.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Mask { float mask[]; };
layout(std430, binding = 2) writeonly buffer Out { float outValues[]; };
layout(push_constant) uniform Push {
    uint N, xBase, outBase;
    uint hasMask, maskBase, maskStart, maskPeriod;
    uint hasSink;
    float sink;
} p;

const float kLowest = -3.402823466e38;

uint xRow, maskRow;

float score(uint n) {
    const float s = x[xRow + n];
    return p.hasMask != 0 && mask[maskRow + n] == 0.0 ? kLowest : s;
}

void main() {
    const uint row = gl_WorkGroupID.y, lid = gl_LocalInvocationID.x;
    xRow = p.xBase + row * p.N;
    maskRow = p.maskBase + (p.maskStart + row) % max(p.maskPeriod, 1u) * p.N;
    float partial = kLowest;
    for (uint n = lid; n < p.N; n += WG) partial = max(partial, score(n));
    const float scoreMax = workgroupMax(partial);
    const float rowMax = p.hasSink != 0 ? max(scoreMax, p.sink) : scoreMax;
    float sum = 0.0;
    for (uint n = lid; n < p.N; n += WG) sum += exp(score(n) - rowMax);
    const float total = workgroupSum(sum) + (p.hasSink != 0 ? exp(p.sink - rowMax) : 0.0);
    for (uint n = lid; n < p.N; n += WG)
        outValues[p.outBase + row * p.N + n] = exp(score(n) - rowMax) / total;
}
