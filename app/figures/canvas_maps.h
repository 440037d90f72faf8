#pragma once
// ForwardResult + selection -> the Vulkan canvas' map (render/canvas): the selected head's
// attention, or its layer's mean, query × key, with the token labels and the heatmap view's
// colour scale, so that the canvas and the Heatmap tab show the same numbers.

#include "canvas/canvas_map.h"
#include "figure_builders.h"

namespace headlight::app {

// An empty map when there is no result or no token.
render::CanvasMap canvasMap(const ForwardResult* result, const ViewState& state);
} // namespace headlight::app
