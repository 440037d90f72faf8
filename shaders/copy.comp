#version 450
// copy (Backend::copyRows): out[outBase + i] = in[inBase + i] for i < n, one stretch of rows
// that stays within one storage buffer of each tensor.
layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer In { float inValues[]; };
layout(std430, binding = 1) writeonly buffer Out { float outValues[]; };
layout(push_constant) uniform Push { uint n, inBase, outBase; } p;

void main() {
    const uint stride = gl_NumWorkGroups.x * WG;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride)
        outValues[p.outBase + i] = inValues[p.inBase + i];
}
