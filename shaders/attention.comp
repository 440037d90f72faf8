#version 450
// attention: one workgroup per (head h, query i), grouped-query aware:
//   s[j] = scale · q[i, h·D:(h+1)·D] · k[j, g·D:(g+1)·D],  g = h / group (group = heads / kvHeads)
//   s[j] = softcap · tanh(s[j] / softcap) when softcap > 0 (Gemma 2's logit soft-capping)
//   s[j] = lowest f32 when key j is masked: keyValid[j] == 0, or causal and j > i, or
//          window > 0 and i - j >= window (Hugging Face semantics: an all-masked row is uniform)
//   p = softmax(s);  context[i, h·D:(h+1)·D] = Σ_j p[j] · v[j, g·D:(g+1)·D]
// Shapes: q, context [T, heads·D]; k, v [T, kvHeads·D] (from rows qRow0, kRow0, vRow0 and
// contextRow0 of their buffers); keyValid [T] (uint, when hasKeyValid);
// scores, probs [heads, T, T] (written when capture*). Workgroup x covers the flattened rows
// r = h·T + i from r0; the captures' buffers hold row r0 at scoresRow0 / probsRow0 (a chunk).
//
// Keys go in tiles of WG, one key per invocation, with an online softmax (running max and sum,
// earlier partial results rescaled when the max grows), so no T-sized buffer is needed. The
// context is then accumulated with each invocation owning D / WG output dimensions. Keys that
// causal or window masking excludes are skipped; if every key in range turns out masked (a
// padded query), the row is recomputed over all T keys so that it is uniform as specified.
// Captures recompute the (cheap, masked) scores at the end, once the final max and sum are known.
#extension GL_GOOGLE_include_directive : require

layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const uint HEAD_DIM = 64;
layout(local_size_x_id = 0) in;
#include "workgroup_reduce.glsl"
#include "accurate_math.glsl"

const uint DIMS_PER_INVOCATION = (HEAD_DIM + WG - 1) / WG;
const float kLowest = -3.402823466e38;

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) readonly buffer KeyValid { uint keyValid[]; };
layout(std430, binding = 4) writeonly buffer Context { float context[]; };
layout(std430, binding = 5) writeonly buffer Scores { float scores[]; };
layout(std430, binding = 6) writeonly buffer Probs { float probs[]; };

layout(push_constant) uniform Push {
    uint T, heads, group;
    uint causal, window, hasKeyValid;
    float scale;
    uint r0;
    uint captureScores, scoresRow0;
    uint captureProbs, probsRow0;
    uint qRow0, kRow0, vRow0, contextRow0;
    float softcap;
} p;

shared float qRow[HEAD_DIM];
shared float tileProbs[WG];

uint query, kvStride, kvOffset;
float runMax = kLowest, runSum = 0.0;
float acc[DIMS_PER_INVOCATION];

bool masked(uint j) {
    return (p.hasKeyValid != 0 && keyValid[j] == 0) || (p.causal != 0 && j > query) ||
           (p.window > 0 && int(query) - int(j) >= int(p.window));
}

float score(uint j) {
    if (masked(j)) return kLowest;
    const uint base = (p.kRow0 + j) * kvStride + kvOffset;
    float dot = 0.0;
    for (uint d = 0; d < HEAD_DIM; ++d) dot = fma(qRow[d], k[base + d], dot);
    const float s = dot * p.scale;
    return p.softcap > 0.0 ? p.softcap * tanhAccurate(s / p.softcap) : s;
}

// Folds keys [j0, j0 + WG) ∩ [j0, jEnd) into the running max, sum and context.
void foldTile(uint j0, uint jEnd) {
    const uint lid = gl_LocalInvocationID.x;
    const uint j = j0 + lid;
    const float s = j < jEnd ? score(j) : kLowest;
    const float newMax = max(runMax, workgroupMax(s));
    // exp(lowest - max) is 0 for a real max; while every key so far is masked both are lowest
    // and the masked keys weigh 1 each, which a later real max rescales away.
    const float prob = j < jEnd ? exp(s - newMax) : 0.0;
    const float correction = exp(runMax - newMax);
    runSum = runSum * correction + workgroupSum(prob);
    runMax = newMax;
    tileProbs[lid] = prob;
    barrier();
    const uint count = min(WG, jEnd - j0);
    for (uint c = 0; c < DIMS_PER_INVOCATION; ++c) {
        const uint d = lid + c * WG;
        if (d >= HEAD_DIM) break;
        float sum = 0.0;
        const uint column = (p.vRow0 + j0) * kvStride + kvOffset + d;
        for (uint l = 0; l < count; ++l) sum = fma(tileProbs[l], v[column + l * kvStride], sum);
        acc[c] = fma(acc[c], correction, sum);
    }
    barrier(); // tileProbs is rewritten by the next tile
}

void attend(uint jBegin, uint jEnd) {
    runMax = kLowest;
    runSum = 0.0;
    for (uint c = 0; c < DIMS_PER_INVOCATION; ++c) acc[c] = 0.0;
    for (uint j0 = jBegin; j0 < jEnd; j0 += WG) foldTile(j0, jEnd);
}

void writeCaptures(uint r) {
    const uint lid = gl_LocalInvocationID.x;
    for (uint j = lid; j < p.T; j += WG) {
        const float s = score(j);
        if (p.captureScores != 0) scores[(p.scoresRow0 + r - p.r0) * p.T + j] = s;
        if (p.captureProbs != 0)
            probs[(p.probsRow0 + r - p.r0) * p.T + j] = exp(s - runMax) / runSum;
    }
}

void main() {
    const uint r = p.r0 + gl_WorkGroupID.x;
    const uint h = r / p.T;
    query = r % p.T;
    const uint kvHeads = p.heads / p.group;
    kvStride = kvHeads * HEAD_DIM;
    kvOffset = (h / p.group) * HEAD_DIM;
    const uint lid = gl_LocalInvocationID.x;
    const uint qBase = (p.qRow0 + query) * p.heads * HEAD_DIM + h * HEAD_DIM;
    const uint contextBase = (p.contextRow0 + query) * p.heads * HEAD_DIM + h * HEAD_DIM;
    for (uint d = lid; d < HEAD_DIM; d += WG) qRow[d] = q[qBase + d];
    barrier();

    // Keys outside [jBegin, jEnd) are masked by causality or the window whatever keyValid says.
    const uint jEnd = p.causal != 0 ? query + 1 : p.T;
    const uint jBegin = p.window > 0 && query + 1 > p.window ? query + 1 - p.window : 0;
    attend(jBegin, jEnd);
    if (runMax == kLowest) attend(0, p.T); // every key masked: uniform over all T keys

    for (uint c = 0; c < DIMS_PER_INVOCATION; ++c) {
        const uint d = lid + c * WG;
        if (d < HEAD_DIM) context[contextBase + d] = acc[c] / runSum;
    }
    if (p.captureScores != 0 || p.captureProbs != 0) writeCaptures(r);
}
