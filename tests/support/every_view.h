#pragma once
// Builds every view (figures and panels) the window offers for `layers` layers of one pass, so a
// test sees any view that throws on an unusual map (pooled, signed).
#include "figure_builders.h"

namespace headlight::test {

inline void buildEveryView(const app::ForwardResult& result, int layers) {
    for (int layer = 0; layer < layers; ++layer) {
        app::ViewState state;
        state.layer = layer;
        for (int k = 0; k < app::kAllViewCount; ++k) {
            const auto kind = app::ViewKind(k);
            if (app::isPanelView(kind))
                app::buildPanels(kind, &result, state);
            else
                app::buildFigure(kind, &result, state);
        }
    }
}
} // namespace headlight::test
