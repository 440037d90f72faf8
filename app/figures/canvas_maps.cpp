#include "canvas_maps.h"

#include "counted.h"

#include <algorithm>

namespace headlight::app {

render::CanvasMap canvasMap(const ForwardResult* result, const ViewState& state) {
    render::CanvasMap map;
    if (!result || result->tokenCount() == 0) return map;
    map.rows = map.cols = result->tokenCount();
    map.values = state.averageHeads ? layerMeanAttention(*result, state.layer)
                                    : headAttention(*result, state.layer, state.head);
    map.high = std::max(*std::max_element(map.values.begin(), map.values.end()), 1e-6f);
    map.colormap = state.colormap;
    map.rowLabels = map.colLabels = result->tokens;
    map.title = (state.averageHeads
                     ? QStringLiteral("Layer %1 · mean of heads").arg(state.layer)
                     : QStringLiteral("Layer %1 · head %2").arg(state.layer).arg(state.head)) +
                QStringLiteral(" · %1").arg(counted(map.rows, QStringLiteral("token")));
    return map;
}
} // namespace headlight::app
