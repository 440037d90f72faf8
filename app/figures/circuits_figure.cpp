#include "circuits_figure.h"

#include "analysis/circuit_scores.h"

#include <algorithm>

namespace headlight::app {
namespace {

const char* const kReads[] = {"queries", "keys", "values"};
// Pairs per kind in the figure's table: three of each fit a projected panel; the CSV of
// `headlight heads --circuits --json` has five.
constexpr int kFigurePairs = 3;

// Rows: the earlier layers, whose heads write; columns: the later layers, whose heads read. A cell
// whose later layer is not after the earlier one has no score and is hatched.
render::HeatmapFigure layerPairs(const analysis::CircuitScores& s, int kind, render::Colormap map) {
    render::HeatmapFigure f;
    f.title = QStringLiteral("%1-composition (into %2)")
                  .arg(analysis::kCompositionNames[std::size_t(kind)], kReads[kind]);
    f.rows = f.cols = s.layers - 1;
    for (int l = 0; l + 1 < s.layers; ++l) {
        f.rowLabels << QStringLiteral("Layer %1").arg(l);
        f.colLabels << QString::number(l + 1);
    }
    f.rowAxis = QStringLiteral("Earlier layer");
    f.colAxis = QStringLiteral("Later layer");
    float top = 0.0f;
    for (int from = 0; from + 1 < s.layers; ++from)
        for (int to = 1; to < s.layers; ++to) {
            const bool scored = to > from;
            const double value = scored ? analysis::layerPairMaximum(s, kind, from, to) : 0.0;
            top = std::max(top, float(value));
            f.values.push_back(float(value));
            f.absent.push_back(!scored);
            f.cellText << (scored ? QString::number(value, 'f', 2) : QString());
        }
    if (s.layers > 2)
        f.absentLabel = QStringLiteral("not later");
    else
        f.absent.clear(); // one cell, scored: no hatching to explain
    f.colorBar = {map, 0.0, std::max(top, 1e-6f), QStringLiteral("Largest score")};
    return f;
}

render::TableFigure strongestTable(const analysis::CircuitScores& s) {
    render::TableFigure f;
    f.title = QStringLiteral("Strongest head pairs");
    f.headers = QStringList{QStringLiteral("Kind"), QStringLiteral("From"), QStringLiteral("To"),
                            QStringLiteral("Score")};
    for (int kind = 0; kind < int(analysis::kCompositionNames.size()); ++kind)
        for (const analysis::CompositionPair& p : analysis::strongestPairs(s, kind, kFigurePairs))
            f.rows.push_back({QString::fromLatin1(analysis::kCompositionNames[std::size_t(kind)]),
                              QStringLiteral("L%1H%2").arg(p.fromLayer).arg(p.fromHead),
                              QStringLiteral("L%1H%2").arg(p.toLayer).arg(p.toHead),
                              QString::number(p.score, 'f', 3)});
    f.emptyMessage = QStringLiteral("Composition needs two layers or more.");
    return f;
}

render::Panel copyingGrid(const analysis::CircuitScores& s, const ViewState& state) {
    if (s.copying.empty())
        return render::NotePanel{
            QStringLiteral("No copying scores: %1").arg(QString::fromStdString(s.copyingAbsence))};
    render::HeatmapFigure f;
    f.title = QStringLiteral("Copying (OV eigenvalues)");
    shapeLayerHeadGrid(f, s.layers, s.heads);
    // Why one decimal: "−1.00" does not fit a small cell, and the sign is what reads.
    for (double value : s.copying) {
        f.values.push_back(float(value));
        f.cellText << QString::number(value, 'f', 1);
    }
    f.colorBar = {render::Colormap::Diverging, -1.0, 1.0, QStringLiteral("Copying score")};
    f.emphasisedRow = state.layer;
    return f;
}

// "strongest K: L0H1 → L1H0 0.41" for each kind.
QString strongestCaption(const analysis::CircuitScores& s) {
    QStringList parts;
    for (int kind = 0; kind < int(analysis::kCompositionNames.size()); ++kind) {
        const std::vector<analysis::CompositionPair> best = analysis::strongestPairs(s, kind, 1);
        if (best.empty()) continue;
        parts << QStringLiteral("%1 L%2H%3 → L%4H%5 %6")
                     .arg(analysis::kCompositionNames[std::size_t(kind)])
                     .arg(best[0].fromLayer)
                     .arg(best[0].fromHead)
                     .arg(best[0].toLayer)
                     .arg(best[0].toHead)
                     .arg(best[0].score, 0, 'f', 2);
    }
    return parts.join(QStringLiteral(", "));
}
} // namespace

render::PanelsFigure circuitsFigure(const ForwardResult& r, const ViewState& state) {
    const QString title = QStringLiteral("Circuits · %1").arg(r.model ? r.model->name() : "");
    if (!r.circuits)
        return render::noteFigure(
            title, r.circuitsNote.isEmpty()
                       ? QStringLiteral("The circuit scores are read from the weights when this "
                                        "view is open: wait for the pass.")
                       : QStringLiteral("No circuit scores: %1").arg(r.circuitsNote));
    const analysis::CircuitScores& s = *r.circuits;
    render::PanelsFigure f;
    f.title = title;
    f.caption = s.layers < 2 ? QStringLiteral("From the weights alone (Elhage et al. 2021): "
                                              "composition needs two layers or more")
                             : QStringLiteral("From the weights alone (Elhage et al. 2021), "
                                              "not the text · strongest: %1")
                                   .arg(strongestCaption(s));
    f.columns = 3;
    if (s.layers >= 2)
        for (int kind = 0; kind < 3; ++kind)
            f.panels.push_back(layerPairs(s, kind, state.colormap));
    f.panels.push_back(strongestTable(s));
    f.panels.push_back(copyingGrid(s, state));
    return f;
}
} // namespace headlight::app
