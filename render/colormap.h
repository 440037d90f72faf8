#pragma once
// Colour maps for the figures: two perceptually uniform, colour-blind-safe sequential maps for
// attention-like values (viridis, cividis), one diverging map for signed differences, and a
// white-to-blue ramp for marks drawn on the white page (token lines), where viridis' yellow top
// would vanish.
//
//   colorAt(map, t)      t in [0, 1] (clamped) -> colour, linear between table entries
//   normalise(v, lo, hi) value -> t, 0.5 for an empty range
//   isDiverging(map)     whether 0.5 is a neutral midpoint (white) rather than a low value

#include <QColor>
#include <QString>

namespace headlight::render {

enum class Colormap { Viridis, Cividis, Diverging, Blues };

QColor colorAt(Colormap map, double t);
double normalise(double value, double low, double high);
bool isDiverging(Colormap map);
QString colormapName(Colormap map); // "viridis", "cividis", "RdBu (reversed)", "Blues"
} // namespace headlight::render
