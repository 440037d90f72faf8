#version 450
// canvas_map_fragment: the attention map of the Vulkan canvas, one cell per (query, key), drawn
// from the values themselves (no texture, no filtering: a cell stays crisp at any zoom).
//   cell = floor((pixel / dpr − origin) / cellSize)   (pixel in framebuffer pixels)
//   colour = lut[round((value − low) / (high − low) · 255)], outside the map: discarded
// The map buffer holds the 256-entry colour table (RGBA8, one uint each) and then the values
// [rows, cols] as float bits. Cells of 12 or more pixels get a 1-pixel gap of the background so
// that neighbouring equal cells stay countable.
layout(std430, binding = 0) readonly buffer Map { uint words[]; };
layout(push_constant) uniform Push {
    vec2 origin;    // logical pixels of cell (0, 0)'s top-left corner
    float cellSize; // logical pixels per cell
    float dpr;      // framebuffer pixels per logical pixel
    uint rows, cols;
    float low, high;
} p;
layout(location = 0) out vec4 colour;

void main() {
    const vec2 at = (gl_FragCoord.xy / p.dpr - p.origin) / p.cellSize;
    if (at.x < 0.0 || at.y < 0.0 || at.x >= float(p.cols) || at.y >= float(p.rows)) discard;
    const uint col = uint(at.x), row = uint(at.y);
    const vec2 inCell = fract(at) * p.cellSize;
    if (p.cellSize >= 12.0 && (inCell.x < 1.0 || inCell.y < 1.0)) discard;
    const float value = uintBitsToFloat(words[256 + row * p.cols + col]);
    const float t = clamp((value - p.low) / max(p.high - p.low, 1e-30), 0.0, 1.0);
    colour = unpackUnorm4x8(words[uint(t * 255.0 + 0.5)]);
}
