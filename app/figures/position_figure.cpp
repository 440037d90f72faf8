#include "position_figure.h"

#include "variants/position_bias.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace headlight::app {
namespace {

using variants::PositionKind;

QStringList numbered(int count, const QString& prefix = {}) {
    QStringList labels;
    for (int i = 0; i < count; ++i)
        labels << prefix + QString::number(i);
    return labels;
}

float largestMagnitude(const std::vector<float>& values) {
    float top = 1e-6f;
    for (float v : values)
        top = std::max(top, std::abs(v));
    return top;
}

render::HeatmapFigure matrix(QString title, int rows, int cols, std::vector<float> values) {
    render::HeatmapFigure f;
    f.title = std::move(title);
    f.rows = rows;
    f.cols = cols;
    f.values = std::move(values);
    return f;
}

// [N, D] table -> its heatmap and the N × N cosine similarity between its rows.
std::vector<render::Panel> tablePanels(const std::vector<float>& table, int n, int d,
                                       const QString& what) {
    render::HeatmapFigure values =
        matrix(what + QStringLiteral(" · position × dimension"), n, d, table);
    const float extent = largestMagnitude(table);
    values.colorBar = {render::Colormap::Diverging, -extent, extent, QStringLiteral("Value")};
    values.rowLabels = numbered(n);
    values.colLabels = numbered(d);
    values.rowAxis = QStringLiteral("Position");
    values.colAxis = QStringLiteral("Dimension");
    std::vector<double> norms(std::size_t(n), 0.0);
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < d; ++k)
            norms[std::size_t(i)] +=
                double(table[std::size_t(i * d + k)]) * table[std::size_t(i * d + k)];
    std::vector<float> similarity(std::size_t(n) * std::size_t(n));
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double dot = 0.0;
            for (int k = 0; k < d; ++k)
                dot += double(table[std::size_t(i * d + k)]) * table[std::size_t(j * d + k)];
            const double norm = std::sqrt(norms[std::size_t(i)] * norms[std::size_t(j)]);
            similarity[std::size_t(i * n + j)] = norm > 0 ? float(dot / norm) : 0.0f;
        }
    render::HeatmapFigure sim =
        matrix(QStringLiteral("Cosine similarity between positions"), n, n, std::move(similarity));
    sim.colorBar = {render::Colormap::Diverging, -1.0, 1.0, QStringLiteral("Cosine")};
    sim.rowLabels = sim.colLabels = numbered(n);
    sim.rowAxis = sim.colAxis = QStringLiteral("Position");
    return {values, sim};
}

std::vector<render::Panel> learnedPanels(const LoadedModel& model, int n) {
    const Tensor& table = model.positionTable;
    const int offset = model.model->spec().positionOffset;
    const int rows = std::min(n, int(table.dim(0)) - offset), d = int(table.dim(1));
    const float* first = table.data() + std::size_t(offset) * std::size_t(d);
    return tablePanels({first, first + std::size_t(rows) * std::size_t(d)}, rows, d,
                       QStringLiteral("Learned table"));
}

std::vector<render::Panel> sinusoidalPanels(int n, int d) {
    const Tensor table = variants::sinusoidalTable(n, d);
    return tablePanels({table.values().begin(), table.values().end()}, n, d,
                       QStringLiteral("Sinusoidal table"));
}

// RoPE rotates dimension pair k of a head by p·ω_k, ω_k = θ^(−2k/d): the query–key score then
// depends on i − j through Σ_k cos((i − j)·ω_k).
std::vector<render::Panel> ropePanels(double theta, int headDim, int n) {
    const int pairs = std::max(headDim / 2, 1);
    std::vector<double> omega(static_cast<std::size_t>(pairs));
    for (int k = 0; k < pairs; ++k)
        omega[std::size_t(k)] = std::pow(theta, -2.0 * k / headDim);
    std::vector<float> angles(std::size_t(n) * std::size_t(pairs));
    for (int p = 0; p < n; ++p)
        for (int k = 0; k < pairs; ++k)
            angles[std::size_t(p * pairs + k)] =
                float(std::fmod(p * omega[std::size_t(k)], 2.0 * std::numbers::pi));
    render::HeatmapFigure a =
        matrix(QStringLiteral("Rotation angle p·ω_k (mod 2π)"), n, pairs, std::move(angles));
    a.colorBar = {render::Colormap::Viridis, 0.0, 2.0 * std::numbers::pi,
                  QStringLiteral("Angle (radians)")};
    a.rowLabels = numbered(n);
    a.colLabels = numbered(pairs);
    a.rowAxis = QStringLiteral("Position p");
    a.colAxis = QStringLiteral("Pair k");
    std::vector<float> pattern(std::size_t(n) * std::size_t(n));
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double sum = 0.0;
            for (double w : omega)
                sum += std::cos((i - j) * w);
            pattern[std::size_t(i * n + j)] = float(sum / pairs);
        }
    render::HeatmapFigure r = matrix(QStringLiteral("Relative pattern (2/d)·Σ cos((i − j)·ω_k)"), n,
                                     n, std::move(pattern));
    r.colorBar = {render::Colormap::Diverging, -1.0, 1.0, QStringLiteral("Mean cosine")};
    r.rowLabels = r.colLabels = numbered(n);
    r.rowAxis = QStringLiteral("Query position i");
    r.colAxis = QStringLiteral("Key position j");
    return {a, r};
}

std::vector<render::Panel> alibiPanels(int heads, int n, const ViewState& s) {
    const std::vector<float> slopes = variants::alibiSlopes(heads);
    std::vector<float> bias(std::size_t(heads) * std::size_t(n));
    QStringList rows;
    for (int h = 0; h < heads; ++h) {
        rows << QStringLiteral("%1 (m = %2)").arg(h).arg(double(slopes[std::size_t(h)]), 0, 'g', 3);
        for (int d = 0; d < n; ++d)
            bias[std::size_t(h * n + d)] = -slopes[std::size_t(h)] * float(d);
    }
    const float low = *std::min_element(bias.begin(), bias.end());
    render::HeatmapFigure perHead =
        matrix(QStringLiteral("Bias −m_h·distance, per head"), heads, n, std::move(bias));
    perHead.colorBar = {render::Colormap::Viridis, low, 0.0, QStringLiteral("Added to the score")};
    perHead.rowLabels = rows;
    perHead.colLabels = numbered(n);
    perHead.rowAxis = QStringLiteral("Head (slope)");
    perHead.colAxis = QStringLiteral("Distance |i − j|");
    perHead.emphasisedRow = s.head;
    const Tensor all = variants::alibiBias(heads, n);
    const float* block = all.data() + std::size_t(s.head) * std::size_t(n) * std::size_t(n);
    render::HeatmapFigure one = matrix(QStringLiteral("Head %1's bias matrix").arg(s.head), n, n,
                                       {block, block + std::size_t(n) * std::size_t(n)});
    one.colorBar = {render::Colormap::Viridis,
                    *std::min_element(one.values.begin(), one.values.end()), 0.0,
                    QStringLiteral("Added to the score")};
    one.rowLabels = one.colLabels = numbered(n);
    one.rowAxis = QStringLiteral("Query position i");
    one.colAxis = QStringLiteral("Key position j");
    return {perHead, one};
}

QString encodingTitle(PositionEncoding encoding, bool fromVariant) {
    const QString source =
        fromVariant ? QStringLiteral("set by the variant") : QStringLiteral("the checkpoint's own");
    switch (encoding) {
    case PositionEncoding::None:
        return QStringLiteral("Position encoding: none (NoPE), %1").arg(source);
    case PositionEncoding::Learned:
        return QStringLiteral("Position encoding: learned absolute table, %1").arg(source);
    case PositionEncoding::Sinusoidal:
        return QStringLiteral("Position encoding: sinusoidal (Vaswani et al. 2017), %1")
            .arg(source);
    case PositionEncoding::Rope:
        return QStringLiteral("Position encoding: rotary (RoPE, Su et al. 2021), %1").arg(source);
    case PositionEncoding::Alibi:
        return QStringLiteral("Position encoding: ALiBi linear biases (Press et al. 2022), %1")
            .arg(source);
    case PositionEncoding::T5:
        return QStringLiteral("Position encoding: T5 relative buckets, %1").arg(source);
    case PositionEncoding::TransformerXl:
        return QStringLiteral(
                   "Position encoding: Transformer-XL relative terms (Dai et al. 2019), %1")
            .arg(source);
    }
    return {};
}

QString encodingCaption(PositionEncoding encoding, const ModelSpec& spec, int n) {
    switch (encoding) {
    case PositionEncoding::Learned:
    case PositionEncoding::Sinusoidal:
        return QStringLiteral("Added to the token embeddings; the first %1 positions of %2 "
                              "dimensions. Similar positions are warm cells beside the diagonal.")
            .arg(n)
            .arg(spec.hidden);
    case PositionEncoding::Rope:
        // Gemma 3's windowed layers have a base of their own; the panels show the global base.
        return QStringLiteral("q and k of each head rotate by p·ω_k, ω_k = %1^(−2k/%2): the score "
                              "depends on i − j only.")
                   .arg(spec.ropeTheta)
                   .arg(spec.headDim) +
               (spec.localRopeTheta > 0
                    ? QStringLiteral(" Windowed layers use base %1.").arg(spec.localRopeTheta)
                    : QString());
    case PositionEncoding::Alibi:
        return QStringLiteral("No position vectors: each head adds −m_h·|i − j| to its scores, "
                              "so far keys fade, faster for steep heads.");
    case PositionEncoding::T5:
        return QStringLiteral("Each head adds a learned bias b_h(bucket(j − i)) to its scores: one "
                              "bucket per distance nearby, logarithmic buckets further away.");
    case PositionEncoding::TransformerXl:
        return QStringLiteral("R for distances 0 to %1 (D = %2); each layer scores "
                              "(q + u)·k_j + (q + v)·W_R R_{i−j}: no absolute positions.")
            .arg(n - 1)
            .arg(spec.hidden);
    default:
        return {};
    }
}
// The trained T5 bias the pass added (its "bias" internal, [H, T, T]): per head against the
// distance back from the last query, and the selected head as a query × key map.
std::vector<render::Panel> t5Panels(const ForwardResult& r, const ViewState& s) {
    const auto found = r.internals.find("bias");
    if (found == r.internals.end() || found->second.shape().size() != 3)
        return {render::NotePanel{QStringLiteral(
            "This pass kept no T5 bias: the dense bias is kept for texts up to 1024 tokens.")}};
    const Tensor& bias = found->second;
    const int heads = int(bias.dim(0)), t = int(bias.dim(1));
    std::vector<float> byDistance;
    for (int h = 0; h < heads; ++h)
        for (int d = 0; d < t; ++d)
            byDistance.push_back(bias.data()[(std::size_t(h) * t + std::size_t(t - 1)) * t +
                                             std::size_t(t - 1 - d)]);
    const float extent = largestMagnitude(byDistance);
    render::HeatmapFigure perHead =
        matrix(QStringLiteral("Bias per head against distance i − j (last query)"), heads, t,
               std::move(byDistance));
    perHead.rowLabels = numbered(heads, QStringLiteral("Head "));
    perHead.colLabels = numbered(t);
    perHead.rowAxis = QStringLiteral("Head");
    perHead.colAxis = QStringLiteral("Distance back");
    perHead.colorBar = {render::Colormap::Diverging, -extent, extent, QStringLiteral("Bias")};
    const int head = std::clamp(s.head, 0, heads - 1);
    const float* first = bias.data() + std::size_t(head) * t * t;
    render::HeatmapFigure map =
        matrix(QStringLiteral("Head %1 · bias added to the scores").arg(head), t, t,
               {first, first + std::size_t(t) * t});
    map.rowLabels = map.colLabels = r.tokens;
    map.rowAxis = QStringLiteral("Query token");
    map.colAxis = QStringLiteral("Key token");
    map.colorBar = perHead.colorBar;
    return {perHead, map};
}
} // namespace

PositionEncoding positionEncoding(const LoadedModel& model, const variants::VariantSpec& variant) {
    const ModelSpec& spec = model.model->spec();
    PositionKind kind = variant.position;
    if (kind == PositionKind::Checkpoint && spec.architecture == Architecture::Headlight)
        kind = spec.zoo.position;
    switch (kind) {
    case PositionKind::None:
        return PositionEncoding::None;
    case PositionKind::Sinusoidal:
        return PositionEncoding::Sinusoidal;
    case PositionKind::Alibi:
        return PositionEncoding::Alibi;
    case PositionKind::Rope:
        return PositionEncoding::Rope;
    case PositionKind::T5:
        return PositionEncoding::T5;
    case PositionKind::Xl:
        return PositionEncoding::TransformerXl;
    case PositionKind::Learned:
        return PositionEncoding::Learned;
    case PositionKind::Checkpoint:
        break;
    }
    if (!model.positionTable.empty()) return PositionEncoding::Learned;
    return spec.positions == PositionsKind::Rotary ? PositionEncoding::Rope
                                                   : PositionEncoding::None;
}

render::PanelsFigure positionFigure(const ForwardResult& result, const ViewState& state) {
    const LoadedModel& model = *result.model;
    const ModelSpec& spec = model.model->spec();
    const PositionEncoding encoding = positionEncoding(model, result.variant);
    const int n = std::max(result.tokenCount(), kMinPositions);
    render::PanelsFigure f;
    f.title = encodingTitle(encoding, result.variant.position != PositionKind::Checkpoint);
    f.caption = encodingCaption(encoding, spec, n);
    switch (encoding) {
    case PositionEncoding::Learned:
        f.panels = learnedPanels(model, n);
        break;
    case PositionEncoding::Sinusoidal:
    case PositionEncoding::TransformerXl:
        f.panels = sinusoidalPanels(n, spec.hidden);
        break;
    case PositionEncoding::Rope:
        f.panels = ropePanels(spec.ropeTheta, spec.headDim, n);
        break;
    case PositionEncoding::Alibi:
        f.panels = alibiPanels(spec.heads, n, state);
        break;
    case PositionEncoding::None:
        f.panels = {render::NotePanel{
            QStringLiteral("No position encoding: the model sees the tokens as a set, except "
                           "that a causal mask still orders them.")}};
        break;
    case PositionEncoding::T5:
        f.panels = t5Panels(result, state);
        break;
    }
    return f;
}
} // namespace headlight::app
