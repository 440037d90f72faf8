#version 450
// causal_linear_attention (Backend::causalLinearAttention), the prefix-sum (RNN) form:
//   S_t = Σ_{s≤t} φk_s v_sᵀ [m, d],  z_t = Σ_{s≤t} φk_s [m],
//   out[t, j] = (φq_t · S_t[:, j]) / (φq_t · z_t + eps)
// Shapes per batch b: phiQ, phiK [T, m], v, out [T, d], batch b at element base + b · T · m (or
// T · d). Workgroup y = batch, x = a block of WG output columns j; each invocation keeps its
// column of S (m = FEATURES values) in registers and walks t in order, so no T × T matrix and no
// atomics. φq_t, φk_t and the running z are staged in shared memory once per step for the whole
// workgroup; every invocation forms the denominator itself (m multiply-adds, as many as its
// numerator), which is cheaper than a reduction and a third barrier per step.
layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const uint FEATURES = 64; // m
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) writeonly buffer Out { float outValues[]; };
layout(push_constant) uniform Push { uint T, d, qBase, kBase, vBase, outBase; float eps; } p;

shared float qShared[FEATURES], kShared[FEATURES], zShared[FEATURES];
float state[FEATURES];

void main() {
    const uint lid = gl_LocalInvocationID.x, batch = gl_WorkGroupID.y;
    const uint j = gl_WorkGroupID.x * WG + lid;
    const uint qkBatch = batch * p.T * FEATURES, vBatch = batch * p.T * p.d;
    for (uint i = 0; i < FEATURES; ++i) state[i] = 0.0;
    for (uint i = lid; i < FEATURES; i += WG) zShared[i] = 0.0;
    for (uint t = 0; t < p.T; ++t) {
        const uint qk = qkBatch + t * FEATURES;
        for (uint i = lid; i < FEATURES; i += WG) {
            const float kv = k[p.kBase + qk + i];
            qShared[i] = q[p.qBase + qk + i];
            kShared[i] = kv;
            zShared[i] += kv;
        }
        barrier();
        if (j < p.d) {
            const float vj = v[p.vBase + vBatch + t * p.d + j];
            float numerator = 0.0, denominator = 0.0;
            for (uint i = 0; i < FEATURES; ++i) {
                state[i] += kShared[i] * vj;
                numerator += qShared[i] * state[i];
                denominator += qShared[i] * zShared[i];
            }
            outValues[p.outBase + vBatch + t * p.d + j] = numerator / (denominator + p.eps);
        }
        barrier(); // the next step overwrites the shared rows
    }
}
