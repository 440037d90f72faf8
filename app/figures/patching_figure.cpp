#include "patching_figure.h"

#include <algorithm>
#include <cmath>

namespace headlight::app {

render::HeatmapFigure patchingFigure(const PatchResult& result, const QStringList& tokens,
                                     const QString& target, const QString& foil) {
    const bool positions = result.grid == PatchGrid::LayersByPositions;
    render::HeatmapFigure f;
    f.title = QStringLiteral("Recovered logit difference %1 − %2 by patching %3")
                  .arg(target, foil,
                       positions ? QStringLiteral("the residual stream")
                                 : QStringLiteral("head outputs"));
    f.rows = result.rows;
    f.cols = result.cols;
    double extent = 1.0;
    for (const double r : result.recovered) {
        f.values.push_back(float(r));
        if (std::isfinite(r)) extent = std::max(extent, std::abs(r));
    }
    for (int l = 0; l < result.rows; ++l)
        f.rowLabels << QString::number(l);
    for (int c = 0; c < result.cols; ++c)
        f.colLabels << (positions && c < tokens.size() ? tokens[c] : QString::number(c));
    f.rowAxis =
        positions ? QStringLiteral("Layer (residual entering it)") : QStringLiteral("Layer");
    f.colAxis = positions ? QStringLiteral("Position") : QStringLiteral("Head");
    f.colorBar = {render::Colormap::Diverging, -extent, extent,
                  QStringLiteral("Recovered (1 = clean)")};
    return f;
}

QString patchingCsv(const PatchResult& result) {
    const bool positions = result.grid == PatchGrid::LayersByPositions;
    QString csv = positions ? QStringLiteral("layer,position,recovered,logit_difference\n")
                            : QStringLiteral("layer,head,recovered,logit_difference\n");
    for (int cell = 0; cell < result.rows * result.cols; ++cell)
        csv += QStringLiteral("%1,%2,%3,%4\n")
                   .arg(cell / result.cols)
                   .arg(cell % result.cols)
                   .arg(result.recovered[std::size_t(cell)], 0, 'g', 9)
                   .arg(result.difference[std::size_t(cell)], 0, 'g', 9);
    return csv;
}
} // namespace headlight::app
