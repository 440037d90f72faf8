#version 450
// heads (Backend::splitHeads, mergeHeads): moves `heads` heads of `rows` tokens between the
// token-major layout x[T, H·d] and the head-major layout [H, T, d]:
//   token-major element  tokenBase + t · tokenStride + h · d + c
//   head-major element   headBase + h · headStride + t · d + c
// SPLIT copies token-major → head-major (splitHeads), otherwise the reverse (mergeHeads). A
// dispatch covers heads [0, heads) from the given bases (all H at once, or one head per dispatch
// when a tensor is split over several storage buffers).
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const bool SPLIT = true;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer In { float inValues[]; };
layout(std430, binding = 1) writeonly buffer Out { float outValues[]; };
layout(push_constant) uniform Push {
    uint heads, rows, d;
    uint tokenBase, tokenStride, headBase, headStride;
} p;

void main() {
    const uint n = p.heads * p.rows * p.d;
    const uint stride = gl_NumWorkGroups.x * WG;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) {
        const uint c = i % p.d, t = (i / p.d) % p.rows, h = i / (p.d * p.rows);
        const uint token = p.tokenBase + t * p.tokenStride + h * p.d + c;
        const uint head = p.headBase + h * p.headStride + t * p.d + c;
        if (SPLIT) outValues[head] = inValues[token];
        else outValues[token] = inValues[head];
    }
}
