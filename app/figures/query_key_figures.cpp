#include "query_key_figures.h"

#include <cmath>

namespace headlight::app {
namespace {

using analysis::QueryKeyEmbedding;

// Why the view has nothing to draw, or an empty string when it has.
QString missingEmbedding(const ForwardResult& r) {
    if (!r.queryKey)
        return QStringLiteral("The pass ran without the query-key embedding; it runs while this "
                              "view is open.");
    return r.queryKey->note;
}

QString shareText(double share) {
    return QStringLiteral("%1%").arg(100.0 * share, 0, 'f', 0);
}

QStringList kindNames() {
    QStringList names;
    for (int k = 0; k < analysis::kTokenKindCount; ++k)
        names << QString::fromLatin1(analysis::tokenKindName(analysis::TokenKind(k)));
    return names;
}

// One head's points: each valid token's query and key, coloured by position (and its kind).
render::ScatterFigure headScatter(const ForwardResult& r, const ViewState& s, int layer, int head) {
    const QueryKeyEmbedding& e = r.queryKey->at(layer, head);
    const std::vector<analysis::TokenKind>& kinds = r.queryKey->kinds;
    render::ScatterFigure f;
    f.labels = r.tokens;
    f.categories = kinds.empty() ? QStringList() : kindNames();
    f.colorBar = {s.colormap, 0.0, std::max(1.0, double(e.tokens - 1)), QStringLiteral("Position")};
    for (int t = 0; t < e.tokens; ++t) {
        const int kind = t < int(kinds.size()) ? int(kinds[std::size_t(t)]) : -1;
        f.points.push_back({e.queryX(t), e.queryY(t), false, t, double(t), kind});
        f.points.push_back({e.keyX(t), e.keyY(t), true, t, double(t), kind});
    }
    f.xAxis = QStringLiteral("PC1 (%1 of variance)").arg(shareText(e.explained[0]));
    f.yAxis = QStringLiteral("PC2 (%1 of variance)").arg(shareText(e.explained[1]));
    f.emphasisedToken = s.query;
    return f;
}

QString cellTitle(const QueryKeyEmbedding& e, int layer, int head) {
    return QStringLiteral("L%1 H%2 · %3")
        .arg(layer)
        .arg(head)
        .arg(shareText(e.explained[0] + e.explained[1]));
}

render::ScatterGridFigure layerGrid(const ForwardResult& r, const ViewState& s) {
    render::ScatterGridFigure g;
    const int heads = r.queryKey->heads;
    g.title = QStringLiteral("Layer %1 · click a head").arg(s.layer);
    g.cols = int(std::ceil(std::sqrt(double(heads))));
    g.rows = (heads + g.cols - 1) / g.cols;
    for (int h = 0; h < heads; ++h) {
        render::ScatterFigure cell = headScatter(r, s, s.layer, h);
        cell.title = cellTitle(r.queryKey->at(s.layer, h), s.layer, h);
        g.cells.push_back(std::move(cell));
        g.cellHeads.emplace_back(s.layer, h);
    }
    g.colorBar = g.cells.front().colorBar;
    g.selected = s.head;
    return g;
}

QString distanceNote(const QueryKeyEmbedding& e) {
    return QStringLiteral("corr(distance, q·k) = %1").arg(e.distanceCorrelation, 0, 'f', 2);
}
} // namespace

render::PanelsFigure queryKeyFigure(const ForwardResult& r, const ViewState& s) {
    const QString title = QStringLiteral("Query-key embedding");
    if (const QString missing = missingEmbedding(r); !missing.isEmpty())
        return render::noteFigure(title, missing);
    const QueryKeyEmbedding& e = r.queryKey->at(s.layer, s.head);
    render::PanelsFigure f;
    f.title = title + QStringLiteral(" · layer %1 · head %2 · %3")
                          .arg(s.layer)
                          .arg(s.head)
                          .arg(r.model ? r.model->name() : QString());
    f.caption = QStringLiteral("PCA of queries ● and keys ▲ (%1 of variance); keys rescaled as in "
                               "AttentionViz: near = high q·k · %2")
                    .arg(shareText(e.explained[0] + e.explained[1]), distanceNote(e));
    render::ScatterFigure byPosition = headScatter(r, s, s.layer, s.head);
    byPosition.title = QStringLiteral("Coloured by position");
    f.panels.push_back(byPosition);
    if (!r.queryKey->kinds.empty()) {
        render::ScatterFigure byKind = byPosition;
        byKind.title = QStringLiteral("Coloured by token kind");
        byKind.byCategory = true;
        f.panels.push_back(std::move(byKind));
    }
    f.panels.push_back(layerGrid(r, s));
    f.columns = 2; // two scatters side by side, the layer's heads under them
    return f;
}

render::PanelsFigure queryKeyGridFigure(const ForwardResult& r, const ViewState& s) {
    const QString title = QStringLiteral("Query-key embedding of every head");
    if (const QString missing = missingEmbedding(r); !missing.isEmpty())
        return render::noteFigure(title, missing);
    render::ScatterGridFigure g;
    g.title = QStringLiteral("Queries ● and keys ▲ by position; PC1 + PC2 share in each corner");
    g.rows = r.queryKey->layers;
    g.cols = r.queryKey->heads;
    for (int l = 0; l < g.rows; ++l)
        g.rowLabels << QStringLiteral("Layer %1").arg(l);
    for (int h = 0; h < g.cols; ++h)
        g.colLabels << QStringLiteral("H%1").arg(h); // as the model grid: 32 heads fit
    for (int l = 0; l < g.rows; ++l)
        for (int h = 0; h < g.cols; ++h) {
            render::ScatterFigure cell = headScatter(r, s, l, h);
            cell.title = cellTitle(r.queryKey->at(l, h), l, h);
            g.cells.push_back(std::move(cell));
            g.cellHeads.emplace_back(l, h);
        }
    g.colorBar = g.cells.front().colorBar;
    g.selected = s.layer * g.cols + s.head;
    render::PanelsFigure f;
    f.title = title + QStringLiteral(" · %1").arg(r.model ? r.model->name() : QString());
    f.caption = QStringLiteral("Keys scaled and shifted as AttentionViz does (Yeh et al. 2023): "
                               "a near key has a high logit q·k/√d; click a head to select it");
    f.columns = 1;
    f.panels = {std::move(g)};
    return f;
}

QString scatterReadout(const render::ScatterFigure& f, const render::ScatterPoint& p) {
    QString text =
        QStringLiteral("%1 “%2” (#%3)")
            .arg(p.key ? QStringLiteral("Key") : QStringLiteral("Query"), f.labels.value(p.token))
            .arg(p.token);
    if (p.category >= 0) text += QStringLiteral(", %1").arg(f.categories.value(p.category));
    return text + QStringLiteral(" · PC1 %1, PC2 %2").arg(p.x, 0, 'f', 2).arg(p.y, 0, 'f', 2);
}
} // namespace headlight::app
