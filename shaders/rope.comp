#version 450
// rope: rotary position embedding, Hugging Face rotate-half layout, in place on x[T, H·D]:
// for head h and pair (i, i + D/2) of row t, with (c, s) = table[t, i] = (cos θ, sin θ),
// θ = positions[t] · theta^(-2i/D):
//   x1' = x1 · c - x2 · s,   x2' = x2 · c + x1 · s.
// The host computes the table as Hugging Face does (inverse frequency and angle in f32), with cos
// and sin correctly rounded: shader cos/sin of angles in the thousands of radians are only good
// to ~1e-4 on some drivers, and the table is shared by q, k and every layer.
// Shapes: table [T, D/2] of vec2. Covers `rows` rows of one row-aligned stretch: rows t0.. of x,
// held from row xRow0 of the x buffer.
layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Table { vec2 table[]; };
layout(push_constant) uniform Push { uint rows, heads, D, t0, xRow0; } p;

void main() {
    const uint halfD = p.D / 2;
    const uint pairsPerRow = p.heads * halfD;
    const uint n = p.rows * pairsPerRow;
    const uint stride = gl_NumWorkGroups.x * WG;
    for (uint k = gl_GlobalInvocationID.x; k < n; k += stride) {
        const uint r = k / pairsPerRow, h = (k % pairsPerRow) / halfD, i = k % halfD;
        const vec2 cs = table[(p.t0 + r) * halfD + i];
        const uint a = (p.xRow0 + r) * p.heads * p.D + h * p.D + i;
        const float x1 = x[a], x2 = x[a + halfD];
        x[a] = x1 * cs.x - x2 * cs.y;
        x[a + halfD] = x2 * cs.x + x1 * cs.y;
    }
}
