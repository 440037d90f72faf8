#include "output_figures.h"

#include <algorithm>
#include <cmath>

namespace headlight::app {
namespace {

using render::noteFigure;

// Why the view has nothing to draw, or an empty string when it has.
QString missingOutput(const ForwardResult& r, bool effect) {
    if (!r.output)
        return QStringLiteral(
            "The pass ran without the output analysis; it runs while this view is open.");
    if (!r.output->note.isEmpty() && !r.output->lens) return r.output->note;
    if (effect && !r.output->effect && r.outputChange.empty())
        return QStringLiteral(
            "This pass runs exact attention with no knockout or edit. Toggle a variant in the "
            "variant panel (or open compare mode's B side), knock out a head, or edit the "
            "residual stream (SAE features, a steering vector) to see what it does to the "
            "output.");
    return {};
}

render::HeatmapFigure lensGrid(const ForwardResult& r, const analysis::LogitLens& lens,
                               const ViewState& s, int panel) {
    render::HeatmapFigure f;
    f.rows = lens.rows;
    f.cols = lens.tokens;
    for (int row = 0; row < lens.rows; ++row)
        f.rowLabels << lensRowLabel(row);
    f.colLabels = r.tokens;
    f.rowAxis = QStringLiteral("Stream after");
    f.colAxis = QStringLiteral("Input token (the lens predicts the next)");
    for (std::size_t i = 0; i < lens.top.size(); ++i) {
        if (panel == 0) {
            f.values.push_back(lens.probability[i]);
            f.cellText << r.output->textOf(lens.top[i]);
        } else if (panel == 1) {
            f.values.push_back(float(std::log10(1.0 + lens.finalRank[i])));
            f.cellText << QString::number(lens.finalRank[i]);
        } else {
            f.values.push_back(lens.entropy[i]);
        }
    }
    if (panel == 0) {
        f.title = QStringLiteral("Top token of the lens, coloured by its probability");
        f.colorBar = {s.colormap, 0.0f, 1.0f, QStringLiteral("Probability")};
    } else if (panel == 1) {
        f.title = QStringLiteral("Rank of the final prediction (0 = already on top)");
        const float high = std::max(1.0f, *std::max_element(f.values.begin(), f.values.end()));
        f.colorBar = {render::Colormap::Blues, 0.0f, high, QStringLiteral("log₁₀(1 + rank)")};
    } else {
        f.title = QStringLiteral("Entropy of the lens distribution (nats)");
        const float high = std::max(1e-3f, *std::max_element(f.values.begin(), f.values.end()));
        f.colorBar = {s.colormap, 0.0f, high, QStringLiteral("Entropy (nats)")};
    }
    return f;
}

QString settledSummary(const analysis::LogitLens& lens, const ForwardResult& r) {
    double sum = 0.0;
    int counted = 0;
    for (int t = 0; t < lens.tokens; ++t) {
        if (t < int(r.valid.size()) && !r.valid[std::size_t(t)]) continue;
        sum += lens.settledRow(t);
        ++counted;
    }
    return counted ? QStringLiteral("reached on average at row %1 of %2")
                         .arg(sum / counted, 0, 'f', 1)
                         .arg(lens.rows - 1)
                   : QString();
}

render::BarChartFigure klBars(const ForwardResult& r, const analysis::OutputEffect& e) {
    render::BarChartFigure f;
    f.title = QStringLiteral("KL(p_exact ‖ p_variant) per position");
    f.labels = r.tokens;
    f.values = e.kl;
    f.valueAxis = QStringLiteral("KL (nats)");
    f.categoryAxis = QStringLiteral("Token");
    f.maxValue = std::max(1e-3f, *std::max_element(e.kl.begin(), e.kl.end()));
    return f;
}

render::Panel headJsdMap(const analysis::OutputEffect& e, const ViewState& s) {
    if (e.headJsd.empty())
        return render::NotePanel{
            QStringLiteral("One of the passes has no attention maps to compare.")};
    render::HeatmapFigure f;
    f.title = QStringLiteral("Attention JSD per head (bits)");
    shapeLayerHeadGrid(f, e.layers, e.heads);
    f.values = e.headJsd;
    f.colorBar = {s.colormap, 0.0f, 1.0f, QStringLiteral("Mean JSD over queries (bits)")};
    return f;
}

render::Panel hiddenBars(const analysis::OutputEffect& e) {
    if (e.hiddenChange.empty())
        return render::NotePanel{QStringLiteral("The passes' hidden states differ in shape.")};
    render::BarChartFigure f;
    f.title = QStringLiteral("Relative change of the hidden state ‖Δh‖ / ‖h‖");
    for (std::size_t l = 0; l < e.hiddenChange.size(); ++l)
        f.labels << (l == 0 ? QStringLiteral("emb.") : lensRowLabel(int(l)));
    f.values = e.hiddenChange;
    f.valueAxis = QStringLiteral("Relative change");
    f.categoryAxis = QStringLiteral("Hidden state after");
    f.maxValue = std::max(1e-3f, *std::max_element(e.hiddenChange.begin(), e.hiddenChange.end()));
    return f;
}

// What a token id reads as, with its probability: "“ the” 0.41".
QString predicted(const ForwardResult& r, int id, double probability) {
    return QStringLiteral("%1 %2").arg(r.output->textOf(id)).arg(probability, 0, 'f', 2);
}

// The knockouts' and residual edits' effect (knockout grid, SAE features, steering vector) on
// a pass whose attention is exact: the edited pass against the same pass without them.
render::PanelsFigure editEffectFigure(const ForwardResult& r) {
    render::BarChartFigure bars;
    bars.title = QStringLiteral("KL(p_clean ‖ p_edited) per position");
    bars.labels = r.tokens;
    bars.valueAxis = QStringLiteral("KL (nats)");
    bars.categoryAxis = QStringLiteral("Token");
    render::TableFigure changed;
    changed.title = QStringLiteral("Predictions that changed");
    changed.headers = {QStringLiteral("Position"), QStringLiteral("After the token"),
                       QStringLiteral("Clean predicts"), QStringLiteral("Edited predicts")};
    changed.emptyMessage = QStringLiteral("The top-1 prediction is the same at every position.");
    for (std::size_t t = 0; t < r.outputChange.size(); ++t) {
        const PositionChange& c = r.outputChange[t];
        bars.values.push_back(float(c.kl));
        if (c.flipped())
            changed.rows.push_back({QString::number(t),
                                    QStringLiteral("“%1”").arg(r.tokens.value(int(t))),
                                    predicted(r, c.cleanTop, c.cleanTopProbability),
                                    predicted(r, c.ablatedTop, c.ablatedTopProbability)});
    }
    bars.maxValue = std::max(1e-3f, *std::max_element(bars.values.begin(), bars.values.end()));
    const OutputChangeSummary summary = summarizeOutputChange(r.outputChange);
    const double positions = double(r.outputChange.size());
    render::PanelsFigure f;
    f.title = QStringLiteral("Edit effect on the output · %1 · the knockouts and edits vs the "
                             "clean pass")
                  .arg(r.model ? r.model->name() : QString());
    f.caption = QStringLiteral("Mean KL %1 nats · top-1 agreement %2% · %3 of the clean top %4 "
                               "leave the edited top %4 per position")
                    .arg(summary.meanKl, 0, 'f', 3)
                    .arg(100.0 * (positions - summary.flipped) / positions, 0, 'f', 0)
                    .arg(summary.meanTopKFlips, 0, 'f', 2)
                    .arg(kOutputChangeTopK);
    f.columns = 2;
    f.panels = {bars, changed};
    return f;
}

// Every position whose top-1 prediction changed, one row each.
render::TableFigure changedTokens(const ForwardResult& r, const analysis::OutputEffect& e) {
    render::TableFigure f;
    f.title = QStringLiteral("Predictions that changed");
    f.headers = {QStringLiteral("Position"), QStringLiteral("After the token"),
                 QStringLiteral("Exact predicts"), QStringLiteral("Variant predicts")};
    f.emptyMessage = QStringLiteral("The top-1 prediction is the same at every position.");
    for (const int t : e.changedPositions())
        f.rows.push_back({QString::number(t), QStringLiteral("“%1”").arg(r.tokens.value(t)),
                          r.output->textOf(e.exactTop[std::size_t(t)]),
                          r.output->textOf(e.variantTop[std::size_t(t)])});
    return f;
}
} // namespace

QString lensRowLabel(int row) {
    return row == 0 ? QStringLiteral("embeddings") : QStringLiteral("layer %1").arg(row - 1);
}

render::PanelsFigure logitLensFigure(const ForwardResult& r, const ViewState& s) {
    const QString title = QStringLiteral("Logit lens");
    if (const QString missing = missingOutput(r, false); !missing.isEmpty())
        return noteFigure(title, missing);
    const analysis::LogitLens& lens = *r.output->lens;
    render::PanelsFigure f;
    f.title = title + QStringLiteral(" · %1").arg(r.model ? r.model->name() : QString());
    f.caption =
        QStringLiteral("Final norm + LM head on each residual stream; the last row is the model's "
                       "prediction, %1")
            .arg(settledSummary(lens, r));
    f.columns = 1;
    f.panels = {lensGrid(r, lens, s, 0), lensGrid(r, lens, s, 1), lensGrid(r, lens, s, 2)};
    return f;
}

render::PanelsFigure variantEffectFigure(const ForwardResult& r, const ViewState& s) {
    const QString title = QStringLiteral("Variant effect on the output");
    if (const QString missing = missingOutput(r, true); !missing.isEmpty())
        return noteFigure(title, missing);
    if (!r.output->effect) return editEffectFigure(r);
    const analysis::OutputEffect& e = *r.output->effect;
    render::PanelsFigure f;
    f.title = title + QStringLiteral(" · %1 · the variant vs exact attention")
                          .arg(r.model ? r.model->name() : QString());
    f.caption =
        QStringLiteral(
            "Mean KL %1 nats · top-1 agreement %2% · %3 of the exact top %4 leave the variant's "
            "top %4 per position")
            .arg(e.meanKl, 0, 'f', 3)
            .arg(100.0 * e.top1Agreement, 0, 'f', 0)
            .arg(e.meanTopKFlips, 0, 'f', 2)
            .arg(e.k);
    f.columns = 2;
    f.panels = {klBars(r, e), headJsdMap(e, s), hiddenBars(e), changedTokens(r, e)};
    return f;
}
} // namespace headlight::app
