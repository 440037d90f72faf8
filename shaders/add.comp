#version 450
// add: out[i] = a[i] + b[i % bLength] (b broadcasts over rows when shorter, e.g. a bias).
// Shapes: a, out [n]; b [bLength], n % bLength == 0.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Out { float outValues[]; };
layout(push_constant) uniform Push { uint n; uint bLength; } p;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    outValues[i] = a[i] + b[i % p.bLength];
}
