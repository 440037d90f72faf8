#version 450
// sparse_attention (Backend::sparseAttention): softmax attention over rows of keys, with no T × T
// matrix. One workgroup per (query i, head h): x = i, y = h.
//   keys of the row:  pattern[rowStart + e], e in [0, n),  row = (h mod Hp)·T + i
//   s_e = scale · q[h, i] · k[h / group, j_e] − slope_h · |i − j_e|   (ALiBi when hasSlopes)
//   p = softmax(s);  context[h, i] = Σ_e p_e · v[h / group, j_e]
// A row with no key attends all T keys with equal scores (Hugging Face's fully masked row).
// pattern words: rowStart [Hp·T + 1], then keys [E] at keysAt, then the slopes' bits [H] at
// slopesAt. Keys go in tiles of WG, one per invocation, with an online softmax (running max and
// sum; earlier partial sums rescaled when the max grows), as attention.comp does; the context is
// accumulated with each invocation owning HEAD_DIM / WG output dimensions. The entries'
// probabilities (weights [H / Hp, E]) are written at the end, once the final max and sum are
// known, when writeWeights is set.
#extension GL_GOOGLE_include_directive : require

layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const uint HEAD_DIM = 64;
layout(local_size_x_id = 0) in;
#include "workgroup_reduce.glsl"

const uint DIMS_PER_INVOCATION = (HEAD_DIM + WG - 1) / WG;
const float kLowest = -3.402823466e38;

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) readonly buffer Pattern { uint pattern[]; };
layout(std430, binding = 4) writeonly buffer Context { float context[]; };
layout(std430, binding = 5) writeonly buffer Weights { float weights[]; };

layout(push_constant) uniform Push {
    uint T, group, patternHeads, entries;
    uint keysAt, slopesAt, hasSlopes, writeWeights;
    float scale;
    uint qBase, kBase, vBase, contextBase, weightsBase;
} p;

shared float qRow[HEAD_DIM];
shared float tileProbs[WG];
shared uint tileKeys[WG];

uint query, head, first, count, kvOffset;
bool emptyRow;
float slope = 0.0, runMax = kLowest, runSum = 0.0;
float acc[DIMS_PER_INVOCATION];

uint keyAt(uint e) {
    return emptyRow ? e : pattern[p.keysAt + first + e];
}

float score(uint e) {
    if (emptyRow) return 0.0;
    const uint j = keyAt(e);
    const uint base = p.kBase + kvOffset + j * HEAD_DIM;
    float dot = 0.0;
    for (uint d = 0; d < HEAD_DIM; ++d) dot = fma(qRow[d], k[base + d], dot);
    return dot * p.scale - slope * abs(float(int(query) - int(j)));
}

// Folds entries [e0, e0 + WG) ∩ [e0, count) into the running max, sum and context.
void foldTile(uint e0) {
    const uint lid = gl_LocalInvocationID.x;
    const uint e = e0 + lid;
    const float s = e < count ? score(e) : kLowest;
    const float newMax = max(runMax, workgroupMax(s));
    const float prob = e < count ? exp(s - newMax) : 0.0;
    const float correction = exp(runMax - newMax);
    runSum = runSum * correction + workgroupSum(prob);
    runMax = newMax;
    tileProbs[lid] = prob;
    tileKeys[lid] = e < count ? keyAt(e) : 0;
    barrier();
    const uint tile = min(WG, count - e0);
    for (uint c = 0; c < DIMS_PER_INVOCATION; ++c) {
        const uint d = lid + c * WG;
        if (d >= HEAD_DIM) break;
        float sum = 0.0;
        for (uint l = 0; l < tile; ++l)
            sum = fma(tileProbs[l], v[p.vBase + kvOffset + tileKeys[l] * HEAD_DIM + d], sum);
        acc[c] = fma(acc[c], correction, sum);
    }
    barrier(); // tileProbs and tileKeys are rewritten by the next tile
}

void main() {
    query = gl_WorkGroupID.x;
    head = gl_WorkGroupID.y;
    const uint lid = gl_LocalInvocationID.x;
    const uint row = (head % p.patternHeads) * p.T + query;
    first = pattern[row];
    emptyRow = pattern[row + 1] == first;
    count = emptyRow ? p.T : pattern[row + 1] - first;
    kvOffset = (head / p.group) * p.T * HEAD_DIM;
    if (p.hasSlopes != 0) slope = uintBitsToFloat(pattern[p.slopesAt + head]);
    const uint qBase = p.qBase + (head * p.T + query) * HEAD_DIM;
    for (uint d = lid; d < HEAD_DIM; d += WG) qRow[d] = q[qBase + d];
    barrier();
    for (uint c = 0; c < DIMS_PER_INVOCATION; ++c) acc[c] = 0.0;
    for (uint e0 = 0; e0 < count; e0 += WG) foldTile(e0);

    const uint contextBase = p.contextBase + (head * p.T + query) * HEAD_DIM;
    for (uint c = 0; c < DIMS_PER_INVOCATION; ++c) {
        const uint d = lid + c * WG;
        if (d < HEAD_DIM) context[contextBase + d] = acc[c] / runSum;
    }
    if (p.writeWeights == 0 || emptyRow) return;
    const uint weightsBase = p.weightsBase + (head / p.patternHeads) * p.entries + first;
    for (uint e = lid; e < count; e += WG) weights[weightsBase + e] = exp(score(e) - runMax) / runSum;
}
