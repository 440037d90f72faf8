#include "features_figure.h"

#include "counted.h"
#include "feature_labels.h"
#include "feature_scan.h"
#include "output_analysis.h"

#include <QFileInfo>
#include <algorithm>
#include <cmath>

namespace headlight::app {
namespace {

constexpr int kTableFeatures = 3;  // per token in the overview's table
constexpr int kHistogramBins = 6;  // "not firing" and five equal bins up to the largest
constexpr int kRowLabelChars = 22; // of a feature's description beside its heatmap row

float activationAt(const Tensor& features, int64_t token, int feature) {
    return features.data()[token * features.dim(1) + feature];
}

float largestOf(const Tensor& features, int feature) {
    float largest = 0.0f;
    for (int64_t t = 0; t < features.dim(0); ++t)
        largest = std::max(largest, activationAt(features, t, feature));
    return largest;
}

QString tokenLabel(const ForwardResult& r, int token) {
    const QString label = r.tokens.value(token);
    return label.isEmpty() ? QStringLiteral("#%1").arg(r.ids.at(std::size_t(token))) : label;
}

QString number(double value) {
    return QString::number(value, 'f', std::abs(value) < 10.0 ? 2 : 1);
}

// "SAE pre_ln at blocks.1.hook_resid_post (standard, 512 features)".
QString saeTitle(const FeatureAnalysis& a) {
    const io::SaeConfig& c = a.sae->sae.config;
    return QStringLiteral("SAE %1 at %2 (%3, %4)")
        .arg(a.sae->name(), QString::fromStdString(c.hookName),
             QLatin1String(analysis::saeArchitectureName(c.architecture)),
             counted(c.dSae, QStringLiteral("feature")));
}

// The reconstruction on the text and, where measured, the losses, in one line.
QString qualityLine(const FeatureAnalysis& a) {
    const analysis::ReconstructionQuality& q = a.quality;
    QString line = std::isfinite(q.varianceExplained)
                       ? QStringLiteral("variance explained %1").arg(q.varianceExplained, 0, 'f', 3)
                       : QStringLiteral("variance explained: one token has none");
    line += QStringLiteral(" · L0 %1").arg(q.meanL0, 0, 'f', 1);
    if (a.lossClean)
        line +=
            QStringLiteral(" · next-token loss %1 as run, %2 SAE spliced, %3 hook zeroed (nats)")
                .arg(*a.lossClean, 0, 'f', 3)
                .arg(*a.lossSpliced, 0, 'f', 3)
                .arg(*a.lossZeroed, 0, 'f', 3);
    else if (!a.lossNote.isEmpty())
        line += QStringLiteral(" · no loss: ") + a.lossNote;
    return line;
}

// What the user's edits did to the output, when the pass carries any.
QString editsLine(const ForwardResult& r) {
    if (r.knockouts.edits.empty() || r.outputChange.empty()) return {};
    const OutputChangeSummary summary = summarizeOutputChange(r.outputChange);
    return QStringLiteral(" · edited: mean KL %1 nats, top-1 changed at %2 of %3")
        .arg(summary.meanKl, 0, 'f', 3)
        .arg(summary.flipped)
        .arg(r.outputChange.size());
}

// "F116", or "F116 digits and numb…" where a Neuronpedia export describes it.
QString rowLabel(const FeatureAnalysis& a, int feature) {
    const QString label = QStringLiteral("F%1").arg(feature);
    const QString description = a.sae->labels ? a.sae->labels->of(feature) : QString();
    if (description.isEmpty()) return label;
    return label + QLatin1Char(' ') +
           (description.size() > kRowLabelChars ? description.left(kRowLabelChars - 1) + "…"
                                                : description);
}

render::Panel featureHeatmap(const ForwardResult& r, const FeatureAnalysis& a, const ViewState& s) {
    const Tensor& f = a.encoding.features;
    const std::vector<int> shown = featuresShown(a);
    render::HeatmapFigure h;
    h.title = QStringLiteral("Strongest features on the text");
    h.rows = int(shown.size());
    h.cols = r.tokenCount();
    float highest = 1e-6f;
    for (int feature : shown) {
        h.rowLabels << rowLabel(a, feature);
        for (int64_t t = 0; t < f.dim(0); ++t) {
            const float value = activationAt(f, t, feature);
            h.values.push_back(value);
            h.cellText << (value > 0.0f ? number(value) : QString());
            highest = std::max(highest, value);
        }
    }
    for (int t = 0; t < r.tokenCount(); ++t)
        h.colLabels << tokenLabel(r, t);
    h.rowAxis = QStringLiteral("Feature");
    h.colAxis = QStringLiteral("Token");
    h.colorBar = {s.colormap, 0.0, double(highest), QStringLiteral("Activation")};
    return h;
}

render::Panel tokenTable(const ForwardResult& r, const FeatureAnalysis& a) {
    render::TableFigure table;
    table.title = QStringLiteral("Each token's strongest features");
    table.headers = {"Pos", "Token", "L0", "Top features (id: activation)"};
    const Tensor& f = a.encoding.features;
    for (int64_t t = 0; t < f.dim(0); ++t) {
        QStringList top;
        for (const FeatureActivation& x : strongestFeatures(f, t, kTableFeatures))
            top << QStringLiteral("%1: %2").arg(x.feature).arg(number(x.activation));
        table.rows.push_back(
            {QString::number(t), tokenLabel(r, int(t)), QString::number(firingFeatures(f, t)),
             top.isEmpty() ? QStringLiteral("none fire") : top.join(QStringLiteral("  "))});
    }
    return table;
}

render::PanelsFigure overview(const ForwardResult& r, const FeatureAnalysis& a,
                              const ViewState& s) {
    render::PanelsFigure figure;
    figure.title = saeTitle(a);
    figure.caption = qualityLine(a) + editsLine(r);
    figure.columns = 2;
    figure.panels = {featureHeatmap(r, a, s), tokenTable(r, a)};
    return figure;
}

render::Panel activationBars(const ForwardResult& r, const FeatureAnalysis& a, int feature) {
    const Tensor& f = a.encoding.features;
    render::BarChartFigure bars;
    bars.title = QStringLiteral("Activation along the text");
    float highest = 0.0f;
    for (int64_t t = 0; t < f.dim(0); ++t) {
        const float value = activationAt(f, t, feature);
        bars.labels << tokenLabel(r, int(t));
        bars.values.push_back(value);
        if (value > highest) {
            highest = value;
            bars.emphasised = int(t);
        }
    }
    bars.valueAxis = QStringLiteral("Activation");
    bars.categoryAxis = QStringLiteral("Token");
    bars.maxValue = std::max(1e-6, double(highest) * 1.15);
    return bars;
}

// How many tokens fall in each bin: "0" (not firing) and five equal bins up to the largest.
render::Panel activationHistogram(const FeatureAnalysis& a, int feature) {
    const Tensor& f = a.encoding.features;
    const float highest = largestOf(f, feature);
    const int bins = highest > 0.0f ? kHistogramBins : 1;
    std::vector<float> counts(std::size_t(bins), 0.0f);
    for (int64_t t = 0; t < f.dim(0); ++t) {
        const float value = activationAt(f, t, feature);
        if (value <= 0.0f) {
            ++counts[0];
            continue;
        }
        const int bin = 1 + std::min(bins - 2, int(value / highest * float(bins - 1)));
        ++counts[std::size_t(bin)];
    }
    render::BarChartFigure histogram;
    histogram.title = QStringLiteral("Histogram over the text's %1")
                          .arg(counted(int(f.dim(0)), QStringLiteral("token")));
    histogram.labels << QStringLiteral("0");
    const float width = highest / float(bins - 1 > 0 ? bins - 1 : 1);
    for (int b = 1; b < bins; ++b)
        histogram.labels << QStringLiteral("%1–%2").arg(number(width * float(b - 1)),
                                                        number(width * float(b)));
    histogram.values = counts;
    histogram.valueAxis = QStringLiteral("Tokens");
    histogram.categoryAxis = QStringLiteral("Activation");
    histogram.maxValue = double(*std::max_element(counts.begin(), counts.end())) * 1.15;
    histogram.decimals = 0;
    return histogram;
}

// The tokens the decoder row promotes beside those it suppresses, strongest first.
render::Panel logitTable(const ForwardResult& r, const FeatureAnalysis& a, int feature) {
    render::TableFigure table;
    table.title = QStringLiteral("Through the unembedding: W_dec[f]·W_U");
    table.headers = {"Promoted", "Logit", "Suppressed", "Logit"};
    const auto found = a.directLogits.find(feature);
    if (found == a.directLogits.end()) {
        table.emptyMessage = a.logitsNote.isEmpty()
                                 ? QStringLiteral("Computed for the features strongest on some "
                                                  "token of the text; this one is not.")
                                 : a.logitsNote;
        return table;
    }
    const DirectLogits& d = found->second;
    const tokenize::Tokenizer* tokenizer = r.model ? r.model->tokenizer.get() : nullptr;
    for (std::size_t i = 0; i < d.promoted.size() && i < d.suppressed.size(); ++i)
        table.rows.push_back({vocabularyLabel(tokenizer, d.promoted[i]),
                              QString::number(double(d.promotedLogits[i]), 'f', 3),
                              vocabularyLabel(tokenizer, d.suppressed[i]),
                              QString::number(double(d.suppressedLogits[i]), 'f', 3)});
    return table;
}

// The scan's strongest contexts of the feature over its corpus, the token in « ».
render::Panel contextTable(const FeatureScan& scan, int feature) {
    render::TableFigure table;
    table.title = QStringLiteral("Top contexts over %1").arg(scan.corpusName());
    table.headers = {"Activation", "Text", "Context"};
    const std::vector<FeatureContext>& top = scan.top.at(std::size_t(feature));
    for (const FeatureContext& c : top)
        table.rows.push_back({number(c.activation), QString::number(c.text + 1),
                              QStringLiteral("%1«%2»%3").arg(c.before, c.token, c.after)});
    table.emptyMessage = QStringLiteral("Feature %1 fires on none of the corpus's %2.")
                             .arg(feature)
                             .arg(counted(int(scan.tokens), QStringLiteral("token")));
    return table;
}

// "fires on 1.2 % of the 10,240 tokens of jargon.txt", where a scan fits this SAE.
QString densityLine(const FeatureScan& scan, int feature) {
    if (scan.tokens == 0) return {};
    const double share = 100.0 * double(scan.fired.at(std::size_t(feature))) / double(scan.tokens);
    return QStringLiteral(" · fires on %1 % of the %2 of %3")
        .arg(share, 0, 'f', share < 0.1 ? 3 : 1)
        .arg(counted(int(scan.tokens), QStringLiteral("token")), scan.corpusName());
}

QString pageCaption(const ForwardResult& r, const FeatureAnalysis& a, int feature) {
    const Tensor& f = a.encoding.features;
    int fires = 0, strongest = -1;
    float highest = 0.0f;
    for (int64_t t = 0; t < f.dim(0); ++t) {
        const float value = activationAt(f, t, feature);
        if (value != 0.0f) ++fires;
        if (value > highest) {
            highest = value;
            strongest = int(t);
        }
    }
    QString line = QStringLiteral("fires on %1 of %2")
                       .arg(fires)
                       .arg(counted(int(f.dim(0)), QStringLiteral("token")));
    if (strongest >= 0)
        line += QStringLiteral(" · strongest %1 at “%2” (position %3)")
                    .arg(number(highest), tokenLabel(r, strongest))
                    .arg(strongest);
    if (const FeatureScan* scan = a.sae->scan.get()) line += densityLine(*scan, feature);
    return line + editsLine(r);
}

render::PanelsFigure featurePage(const ForwardResult& r, const FeatureAnalysis& a, int feature) {
    const int width = a.sae->sae.config.dSae;
    const QString description = a.sae->labels ? a.sae->labels->of(feature) : QString();
    const QString title =
        description.isEmpty()
            ? QStringLiteral("Feature %1 · %2").arg(feature).arg(saeTitle(a))
            : QStringLiteral("Feature %1 “%2” · %3").arg(feature).arg(description, saeTitle(a));
    if (feature >= width)
        return render::noteFigure(title, QStringLiteral("Feature %1 is past the SAE's %2 (0 to "
                                                        "%3): choose another.")
                                             .arg(feature)
                                             .arg(counted(width, QStringLiteral("feature")))
                                             .arg(width - 1));
    render::PanelsFigure figure;
    figure.title = title;
    figure.caption = pageCaption(r, a, feature);
    // Why one row of three: each panel gets the figure's whole height, and the text of the
    // tables stays large enough to read from the back of a room.
    figure.columns = 3;
    figure.panels = {activationBars(r, a, feature), activationHistogram(a, feature),
                     logitTable(r, a, feature)};
    if (const FeatureScan* scan = a.sae->scan.get()) {
        figure.columns = 2;
        figure.panels.push_back(contextTable(*scan, feature));
    }
    return figure;
}
} // namespace

std::vector<int> featuresShown(const FeatureAnalysis& analysis) {
    const Tensor& f = analysis.encoding.features;
    std::vector<std::pair<float, int>> ranked;
    for (int feature = 0; feature < int(f.dim(1)); ++feature)
        if (const float largest = largestOf(f, feature); largest > 0.0f)
            ranked.push_back({largest, feature});
    const std::size_t keep = std::min(ranked.size(), std::size_t(kFeatureRows));
    std::partial_sort(ranked.begin(), ranked.begin() + std::ptrdiff_t(keep), ranked.end(),
                      [](const auto& a, const auto& b) {
                          return a.first != b.first ? a.first > b.first : a.second < b.second;
                      });
    std::vector<int> shown;
    for (std::size_t i = 0; i < keep; ++i)
        shown.push_back(ranked[i].second);
    return shown;
}

render::PanelsFigure featuresFigure(const ForwardResult& r, const ViewState& s) {
    if (!r.features)
        return render::noteFigure(QStringLiteral("Sparse autoencoder features"),
                                  r.featuresNote.isEmpty() ? noSaeNote() : r.featuresNote);
    if (s.feature >= 0) return featurePage(r, *r.features, s.feature);
    return overview(r, *r.features, s);
}
} // namespace headlight::app
