#version 450
// rope: rotary position embedding, in place on x[T, H·D], on the first R features of each head
// (R even, R <= D; the rest pass through). Pair i < R/2 of head h, row t is the features
// (a, b) = (i, i + R/2) in Hugging Face's rotate-half layout, or (2i, 2i + 1) when interleaved
// (GPT-J's rotate_every_two); with (c, s) = table[t, i] = (cos θ, sin θ),
// θ = positions[t] · theta^(-2i/R):
//   x_a' = x_a · c - x_b · s,   x_b' = x_b · c + x_a · s.
// The host computes the table as Hugging Face does (inverse frequency and angle in f32), with cos
// and sin correctly rounded: shader cos/sin of angles in the thousands of radians are only good
// to ~1e-4 on some drivers, and the table is shared by q, k and every layer.
// Shapes: table [T, R/2] of vec2. Covers `rows` rows of one row-aligned stretch: rows t0.. of x,
// held from row xRow0 of the x buffer.
layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Table { vec2 table[]; };
layout(push_constant) uniform Push { uint rows, heads, D, t0, xRow0, R, interleaved; } p;

void main() {
    const uint halfR = p.R / 2;
    const uint pairsPerRow = p.heads * halfR;
    const uint n = p.rows * pairsPerRow;
    const uint stride = gl_NumWorkGroups.x * WG;
    const uint step = p.interleaved != 0 ? 2 : 1, partner = p.interleaved != 0 ? 1 : halfR;
    for (uint k = gl_GlobalInvocationID.x; k < n; k += stride) {
        const uint r = k / pairsPerRow, h = (k % pairsPerRow) / halfR, i = k % halfR;
        const vec2 cs = table[(p.t0 + r) * halfR + i];
        const uint a = (p.xRow0 + r) * p.heads * p.D + h * p.D + i * step;
        const float x1 = x[a], x2 = x[a + partner];
        x[a] = x1 * cs.x - x2 * cs.y;
        x[a + partner] = x2 * cs.x + x1 * cs.y;
    }
}
