#version 450
// canvas_map_vertex: one triangle that covers the whole framebuffer (vertices 0, 1, 2 at
// (-1,-1), (3,-1), (-1,3)); canvas_map_fragment decides per pixel what to draw.
void main() {
    const vec2 corner = vec2((gl_VertexIndex << 1) & 2, gl_VertexIndex & 2);
    gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
