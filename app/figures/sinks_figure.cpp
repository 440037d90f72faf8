#include "sinks_figure.h"

#include <algorithm>
#include <cmath>

namespace headlight::app {
namespace {

QString ordinal(int n) {
    static const char* suffixes[] = {"st", "nd", "rd"};
    return QString::number(n) + (n >= 1 && n <= 3 ? suffixes[n - 1] : "th");
}

QString tokenOf(const ForwardResult& r, int token) {
    const QString label = r.tokens.value(token);
    return label.isEmpty() ? QStringLiteral("#%1").arg(r.ids.at(std::size_t(token)))
                           : QStringLiteral("“%1”").arg(label);
}

// Rows: layers; columns: the largest activations by rank, coloured by how many medians they are.
render::Panel activationGrid(const analysis::SinkReport& report, const ViewState& s) {
    render::HeatmapFigure f;
    f.title = QStringLiteral("Largest |x| per layer, in medians");
    f.rows = report.layers;
    f.cols = int(report.activations.front().top.size());
    float highest = 1.0f;
    for (const analysis::LargestActivations& layer : report.activations)
        for (const analysis::Activation& a : layer.top) {
            const float ratio = layer.median > 0.0 ? float(std::abs(a.value) / layer.median) : 0.0f;
            f.values.push_back(ratio);
            f.cellText << QString::number(double(ratio), 'f', ratio < 10.0f ? 1 : 0);
            highest = std::max(highest, ratio);
        }
    for (int l = 0; l < report.layers; ++l)
        f.rowLabels << QStringLiteral("Layer %1").arg(l);
    for (int k = 1; k <= f.cols; ++k)
        f.colLabels << ordinal(k);
    f.rowAxis = QStringLiteral("Layer");
    f.colAxis = QStringLiteral("Largest activations, by rank");
    f.colorBar = {s.colormap, 0.0, double(highest), QStringLiteral("|x| ÷ median |x|")};
    f.emphasisedRow = report.ariseLayer;
    return f;
}

render::Panel shareGrid(const analysis::SinkReport& report, const ViewState& s) {
    render::HeatmapFigure f;
    f.title = QStringLiteral("Sink share: attention on token 0");
    shapeLayerHeadGrid(f, report.layers, report.heads);
    for (double share : report.sinkShare) {
        f.values.push_back(float(share));
        f.cellText << QString::number(share, 'f', 2);
    }
    f.colorBar = {s.colormap, 0.0, 1.0, QStringLiteral("Share on token 0")};
    f.emphasisedRow = s.layer;
    return f;
}

render::Panel largestTable(const ForwardResult& r, const analysis::SinkReport& report) {
    render::TableFigure f;
    f.title = QStringLiteral("Each layer's largest (* massive)");
    f.headers = {"Layer", "Token", "Dim", "Value", "Median"};
    for (int l = 0; l < report.layers; ++l) {
        const analysis::LargestActivations& layer = report.activations[std::size_t(l)];
        const analysis::Activation& a = layer.top.front();
        f.rows.push_back({QString::number(l), tokenOf(r, a.token), QString::number(a.dim),
                          QString::number(double(a.value), 'g', 4) +
                              (layer.isMassive(a) ? QStringLiteral("*") : QString()),
                          QString::number(layer.median, 'g', 3)});
    }
    return f;
}

// The table's narrow first column: what was done, in a few words (the CLI prints the label).
QString shortName(const analysis::SinkAblation& a, const analysis::SinkReport& report) {
    if (a.id == "zero-massive")
        return QStringLiteral("Zero %1 largest (L%2)")
            .arg(report.activations.front().top.size())
            .arg(report.ariseLayer);
    if (a.id == "drop-first") return QStringLiteral("Drop token 0");
    if (a.id == "sink-softmax") return QStringLiteral("Softmax + zero sink");
    if (a.id == "sigmoid") return QStringLiteral("Sigmoid attention");
    return QStringLiteral("Softmax");
}

render::Panel ablationTable(const analysis::SinkReport& report) {
    render::TableFigure f;
    f.title = QStringLiteral("Sink taken away (clean share %1)")
                  .arg(analysis::meanShare(report.sinkShare), 0, 'f', 2);
    f.headers = {"Ablation", "KL (nats)", "Top-1 changed", "Share after"};
    for (const analysis::SinkAblation& a : report.ablations) {
        const QString name = shortName(a, report);
        if (!a.refusal.empty()) {
            f.rows.push_back({name, QStringLiteral("refused"), QString(), QString()});
            continue;
        }
        f.rows.push_back(
            {name, report.hasOutput ? QString::number(a.meanKl, 'f', 3) : QStringLiteral("—"),
             report.hasOutput ? QStringLiteral("%1 of %2").arg(a.top1Changes).arg(a.positions)
                              : QStringLiteral("—"),
             QString::number(analysis::meanShare(a.sinkShare), 'f', 2)});
    }
    return f;
}

QString sinksCaption(const ForwardResult& r, const analysis::SinkReport& report) {
    const analysis::LargestActivations& arise = report.activations[std::size_t(report.ariseLayer)];
    const analysis::Activation& a = arise.top.front();
    int massive = 0;
    for (const analysis::LargestActivations& layer : report.activations)
        massive += int(std::count_if(layer.top.begin(), layer.top.end(),
                                     [&](const auto& x) { return layer.isMassive(x); }));
    QString text = QStringLiteral("%1 tokens · the largest arise at layer %2: %3 at %4, dim %5, "
                                  "%6× the median · %7 massive by Sun et al.'s test")
                       .arg(report.tokens)
                       .arg(report.ariseLayer)
                       .arg(double(a.value), 0, 'g', 4)
                       .arg(tokenOf(r, a.token))
                       .arg(a.dim)
                       .arg(arise.ratio(), 0, 'f', 0)
                       .arg(massive);
    if (!report.hasOutput)
        text += QStringLiteral(" · no output change: %1")
                    .arg(QString::fromStdString(report.outputAbsence));
    return text;
}
} // namespace

render::PanelsFigure sinksFigure(const ForwardResult& r, const ViewState& s) {
    const QString title = QStringLiteral("Attention sinks and massive activations · %1")
                              .arg(r.model ? r.model->name() : QString());
    if (!r.sinks)
        return render::noteFigure(title, r.sinksNote.isEmpty()
                                             ? QStringLiteral("Sinks are computed with the pass; "
                                                              "run it again.")
                                             : r.sinksNote);
    const analysis::SinkReport& report = *r.sinks;
    render::PanelsFigure f;
    f.title = title;
    f.caption = sinksCaption(r, report);
    f.columns = 2;
    f.panels = {activationGrid(report, s), shareGrid(report, s), largestTable(r, report),
                ablationTable(report)};
    return f;
}
} // namespace headlight::app
