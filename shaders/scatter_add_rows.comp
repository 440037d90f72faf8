#version 450
// scatter_add_rows (Backend::scatterAddRows): out[target] += Σ weight · src[source] over the
// sources of each target row, in the order the host listed them (the CPU's order, so repeated
// ids need no atomics and sum reproducibly). The host groups the work per target:
//   plan[3·g .. 3·g + 2]                = (out element of target g, first entry, end entry)
//   plan[entry0 + 2·e], [entry0 + 2·e + 1] = (src element of source e, weight's bits)
// Shapes: src and out rows of N values; workgroup y = target g - target0, x strides over N.
layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Src { float src[]; };
layout(std430, binding = 1) readonly buffer Plan { uint plan[]; };
layout(std430, binding = 2) buffer Out { float outValues[]; };
layout(push_constant) uniform Push { uint N, target0, entry0; } p;

void main() {
    const uint g = 3 * (p.target0 + gl_WorkGroupID.y);
    const uint target = plan[g], first = plan[g + 1], end = plan[g + 2];
    for (uint n = gl_LocalInvocationID.x; n < p.N; n += WG) {
        float sum = outValues[target + n];
        for (uint e = first; e < end; ++e) {
            const uint entry = p.entry0 + 2 * e;
            sum += uintBitsToFloat(plan[entry + 1]) * src[plan[entry] + n];
        }
        outValues[target + n] = sum;
    }
}
