#version 450
// gather_rows: out[t, :] = table[ids[t], :] for the rows t of one stretch of out, from one row
// chunk of the table: table rows [tableRow0, tableRow0 + tableRows) of the full table [V, D];
// rows whose id lies in another chunk are left to that chunk's dispatch.
// Shapes: ids [T] (int32, all < V), out [T, D]; workgroup y = t - t0, x strides over D.
// TABLE_DTYPE: f32 values, or an F16 / BF16 table in 16 bits (stored_weight.glsl); offsets into
// the table count its elements whatever their size.
#extension GL_GOOGLE_include_directive : require
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint TABLE_DTYPE = 0; // DTYPE_F32, DTYPE_F16 or DTYPE_BF16
layout(local_size_x_id = 0) in;

#include "stored_weight.glsl"

layout(std430, binding = 0) readonly buffer Table { float table[]; };
layout(std430, binding = 0) readonly buffer Table16 { uint tablePairs[]; }; // two per uint
layout(std430, binding = 1) readonly buffer Ids { int ids[]; };
layout(std430, binding = 2) writeonly buffer Out { float outValues[]; };
layout(push_constant) uniform Push {
    uint D;
    uint t0;         // first row of out in this dispatch (index into ids)
    uint outRow0;    // row of the out buffer holding out[t0, :]
    uint tableRow0;  // first table row held by this table buffer
    uint tableRows;
    uint tableBufferRow0; // row of the table buffer holding table row tableRow0
} p;

void main() {
    const uint t = p.t0 + gl_WorkGroupID.y;
    const uint row = uint(ids[t]) - p.tableRow0; // wraps to a huge value below this chunk
    if (row >= p.tableRows) return;
    const uint from = (p.tableBufferRow0 + row) * p.D, to = (p.outRow0 + gl_WorkGroupID.y) * p.D;
    for (uint d = gl_LocalInvocationID.x; d < p.D; d += WG)
        outValues[to + d] = TABLE_DTYPE == DTYPE_F32 ? table[from + d]
                                                     : WIDEN_ELEMENT(tablePairs, from + d, TABLE_DTYPE);
}
