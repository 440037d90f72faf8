#version 450
// matmul (Backend::linear and Backend::matmul), batched over workgroup z = batch i:
//   out[i][m, nOffset + n] = alpha · Σ_k x[i][m, k] · w[i / group](k, n) (+ bias[nOffset + n])
// with w(k, n) = w[n, k] (TRANS_B: an nn.Linear weight, or matmul's transposeB) or w[k, n].
// Shapes: x[i] [M, K] from element xBase + i · xBatch; w[i / group] from element
// wBase + (i / group) · wBatch, [nCount, K] (TRANS_B; one row chunk of an nn.Linear weight
// [N, K]) or [K, ldw]; out[i] [M, N] from element outBase + i · outBatch; bias [N] from element
// biasBase (unused when hasBias == 0).
//
// Design: each invocation keeps a TM × TN block of outputs in registers. All invocations of a
// workgroup share the same TM rows of x, and each owns TN columns (strided by WG so that stores of
// neighbouring invocations are adjacent). On CPU drivers loads, not arithmetic, bound this
// kernel: lavapipe fetches every lane of a load separately (~1 ns per vec4 component, ~2.5 ns per
// scalar), while a subgroupShuffle is a register permute (~0.1 ns; subgroupBroadcast costs 15×
// more there). So x is loaded cooperatively, lane l of a subgroup taking x[m, k0 + l] (a vec4 of
// four k when VEC4), and every lane gets the values it needs by shuffling. Per k an invocation
// then issues TN + TM / SG loads for TM · TN multiply-adds. No shared memory: on lavapipe it is
// slower than registers. Workgroup x walks M and y walks N, so that consecutive workgroups reuse
// the same columns of w from cache. [[unroll]] keeps every array index constant, i.e. in registers.
// Without TRANS_B the values of w along k are ldw apart, so VEC4 then loads only x as vec4.
// W_DTYPE: w holds f32 values, or F16 / BF16 weights in 16 bits (stored_weight.glsl); every read
// of w goes through wAt and wQuad, and offsets into w count its elements whatever their size.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require

layout(constant_id = 0) const uint WG = 64;       // invocations per workgroup
layout(constant_id = 1) const uint TM = 16;       // rows per invocation (shared by the workgroup)
layout(constant_id = 2) const uint TN = 4;        // columns per invocation
layout(constant_id = 3) const uint SG = 8;        // lanes loading x together: ≤ the smallest subgroup
layout(constant_id = 4) const bool VEC4 = false;  // K % 4 == 0 and aligned bases: vec4 loads
layout(constant_id = 5) const bool TRANS_B = true; // w is [n, k] (k contiguous)
layout(constant_id = 6) const uint W_DTYPE = 0;    // DTYPE_F32, DTYPE_F16 or DTYPE_BF16
layout(local_size_x_id = 0) in;

#include "stored_weight.glsl"

// The vec4 views alias the float views (same binding) so that one pipeline layout serves both.
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 0) readonly buffer X4 { vec4 x4[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 1) readonly buffer W4 { vec4 w4[]; };
layout(std430, binding = 1) readonly buffer W16 { uint wPairs[]; }; // 16-bit w, two per uint
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Out { float outValues[]; };

layout(push_constant) uniform Push {
    uint M, K, N;     // rows, reduction length, full width of out (its row stride)
    uint nOffset;     // first column of out (and bias) covered by this chunk of w
    uint nCount;      // columns covered (rows of this chunk of w when TRANS_B)
    uint ldw;         // row stride of w without TRANS_B
    uint xBase, wBase, outBase; // elements of the buffers holding batch 0's first value
    uint xBatch, wBatch, outBatch, group; // batch strides (elements); w batch = z / group
    uint hasBias, biasBase;
    float alpha;
} p;

float acc[TM * TN];
uint rowBase[TM]; // element offset of each x row (clamped rows repeat the last one)
uint colBase[TN]; // element offset of each w column (clamped likewise)

// Element of w at (k, column n of this invocation).
uint wIndex(uint n, uint k) { return TRANS_B ? colBase[n] + k : colBase[n] + k * p.ldw; }

// The f32 value of element `index` of w.
float wAt(uint index) {
    return W_DTYPE == DTYPE_F32 ? w[index] : WIDEN_ELEMENT(wPairs, index, W_DTYPE);
}

// One k step: the x values come from lane `j`'s registers.
void step(float xs[TM], uint j, float wv[TN]) {
    [[unroll]] for (uint m = 0; m < TM; ++m) {
        const float xv = subgroupShuffle(xs[m], j);
        [[unroll]] for (uint n = 0; n < TN; ++n) acc[m * TN + n] = fma(xv, wv[n], acc[m * TN + n]);
    }
}

// Scalar path: SG values of k per cooperative load.
void scalarLoop(uint lane, uint kFull) {
    for (uint k0 = 0; k0 < kFull; k0 += SG) {
        float xs[TM];
        [[unroll]] for (uint m = 0; m < TM; ++m) xs[m] = x[rowBase[m] + k0 + lane % SG];
        [[unroll]] for (uint j = 0; j < SG; ++j) {
            float wv[TN];
            [[unroll]] for (uint n = 0; n < TN; ++n) wv[n] = wAt(wIndex(n, k0 + j));
            step(xs, j, wv);
        }
    }
}

// Four consecutive k of w for column n, from k = 4 · k4.
vec4 wQuad(uint n, uint k4) {
    if (TRANS_B && W_DTYPE == DTYPE_F32) return w4[colBase[n] / 4 + k4];
    if (TRANS_B) { // colBase[n] is a multiple of 4 (VEC4): two whole uints
        const uint word = (colBase[n] + 4 * k4) / 2;
        return vec4(widenPair(wPairs[word], W_DTYPE), widenPair(wPairs[word + 1], W_DTYPE));
    }
    const uint k = 4 * k4;
    return vec4(wAt(wIndex(n, k)), wAt(wIndex(n, k + 1)), wAt(wIndex(n, k + 2)),
                wAt(wIndex(n, k + 3)));
}

// vec4 path: 4 · SG values of k per cooperative load; k0 counts vec4s.
void vec4Loop(uint lane, uint kFull) {
    for (uint k0 = 0; k0 < kFull / 4; k0 += SG) {
        vec4 xs[TM];
        [[unroll]] for (uint m = 0; m < TM; ++m) xs[m] = x4[rowBase[m] / 4 + k0 + lane % SG];
        [[unroll]] for (uint j = 0; j < SG; ++j) {
            vec4 wv[TN];
            [[unroll]] for (uint n = 0; n < TN; ++n) wv[n] = wQuad(n, k0 + j);
            [[unroll]] for (uint c = 0; c < 4; ++c) {
                float xc[TM], wc[TN];
                [[unroll]] for (uint m = 0; m < TM; ++m) xc[m] = xs[m][c];
                [[unroll]] for (uint n = 0; n < TN; ++n) wc[n] = wv[n][c];
                step(xc, j, wc);
            }
        }
    }
}

// The last K % (SG · width) values of k: every invocation loads its own x (rare, and short).
void tailLoop(uint kFrom) {
    for (uint k = kFrom; k < p.K; ++k) {
        [[unroll]] for (uint m = 0; m < TM; ++m) {
            const float xv = x[rowBase[m] + k];
            [[unroll]] for (uint n = 0; n < TN; ++n)
                acc[m * TN + n] = fma(xv, wAt(wIndex(n, k)), acc[m * TN + n]);
        }
    }
}

void main() {
    const uint batch = gl_WorkGroupID.z;
    const uint m0 = gl_WorkGroupID.x * TM;
    const uint n0 = gl_WorkGroupID.y * WG * TN + gl_LocalInvocationID.x;
    const uint xBatch = p.xBase + batch * p.xBatch, wBatch = p.wBase + batch / p.group * p.wBatch;
    [[unroll]] for (uint m = 0; m < TM; ++m) rowBase[m] = xBatch + min(m0 + m, p.M - 1) * p.K;
    [[unroll]] for (uint n = 0; n < TN; ++n) {
        const uint col = min(n0 + n * WG, p.nCount - 1);
        colBase[n] = wBatch + (TRANS_B ? col * p.K : col);
    }
    [[unroll]] for (uint i = 0; i < TM * TN; ++i) acc[i] = 0.0;

    // Every invocation takes part in the loads and shuffles, even one whose outputs fall outside
    // out: a shuffle reads lanes that must be active.
    const uint lane = gl_SubgroupInvocationID;
    const uint chunk = VEC4 ? 4 * SG : SG;
    const uint kFull = p.K - p.K % chunk;
    if (VEC4) vec4Loop(lane, kFull);
    else scalarLoop(lane, kFull);
    tailLoop(kFull);

    const uint outBatch = p.outBase + batch * p.outBatch;
    [[unroll]] for (uint n = 0; n < TN; ++n) {
        const uint col = n0 + n * WG;
        if (col >= p.nCount) continue;
        const float b = p.hasBias != 0 ? bias[p.biasBase + p.nOffset + col] : 0.0;
        [[unroll]] for (uint m = 0; m < TM; ++m) {
            if (m0 + m >= p.M) break;
            outValues[outBatch + (m0 + m) * p.N + p.nOffset + col] = fma(acc[m * TN + n], p.alpha, b);
        }
    }
}
