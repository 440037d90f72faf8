#include "sparsity_figure.h"

#include "streamed_figures.h"

#include <algorithm>
#include <cmath>

namespace headlight::app {
namespace {

// Exact softmax without a mask allows every key, or every earlier key in a causal model: a
// weight that underflows to 0 was still allowed.
std::vector<float> causalPattern(const ForwardResult& r) {
    const int t = r.tokenCount();
    const bool causal = r.model && r.model->model->spec().causal;
    std::vector<float> allowed(std::size_t(t) * std::size_t(t), 1.0f);
    for (int i = 0; i < t && causal; ++i)
        for (int j = i + 1; j < t; ++j)
            allowed[std::size_t(i * t + j)] = 0.0f;
    return allowed;
}

// The [T, T] allowed pattern of head `head` (1 allowed, 0 not): the mask the softmax obeyed
// (a shared mask has one head, a per-head one cycles), else where the variant attends.
std::vector<float> allowedPattern(const ForwardResult& r, int layer, int head) {
    const auto mask = r.internals.find("mask");
    if (mask != r.internals.end()) {
        const Tensor& m = mask->second;
        const std::size_t t = std::size_t(r.tokenCount());
        const float* block = m.data() + std::size_t(head % m.dim(0)) * t * t;
        return {block, block + t * t};
    }
    if (r.variant.kernel == variants::AttentionKernel::Softmax) return causalPattern(r);
    std::vector<float> allowed = headAttention(r, layer, head);
    for (float& w : allowed)
        w = std::abs(w) > kAttendedWeight ? 1.0f : 0.0f;
    return allowed;
}

bool isValid(const ForwardResult& r, int token) {
    return r.valid.empty() || r.valid[std::size_t(token)] != 0;
}

float densityOf(const ForwardResult& r, const std::vector<float>& allowed) {
    const int t = r.tokenCount();
    double kept = 0.0, pairs = 0.0;
    for (int i = 0; i < t; ++i)
        for (int j = 0; j < t; ++j)
            if (isValid(r, i) && isValid(r, j)) {
                pairs += 1.0;
                kept += allowed[std::size_t(i * t + j)];
            }
    return pairs > 0 ? float(kept / pairs) : 0.0f;
}

float massOutsideOf(const ForwardResult& r, const std::vector<float>& allowed, int layer,
                    int head) {
    const int t = r.tokenCount(), heads = int(r.vanillaAttention.dim(1));
    const float* vanilla =
        r.vanillaAttention.data() + (std::size_t(layer) * std::size_t(heads) + std::size_t(head)) *
                                        std::size_t(t) * std::size_t(t);
    double total = 0.0;
    int queries = 0;
    for (int i = 0; i < t; ++i) {
        if (!isValid(r, i)) continue;
        ++queries;
        for (int j = 0; j < t; ++j)
            if (isValid(r, j) && allowed[std::size_t(i * t + j)] == 0.0f)
                total += vanilla[std::size_t(i * t + j)];
    }
    return queries > 0 ? float(total / queries) : 0.0f;
}

QStringList headLabels(int heads) {
    QStringList labels;
    for (int h = 0; h < heads; ++h)
        labels << QString::number(h);
    return labels;
}

render::HeatmapFigure tokenMap(const ForwardResult& r, std::vector<float> values) {
    render::HeatmapFigure f;
    f.rows = f.cols = r.tokenCount();
    f.values = std::move(values);
    f.rowLabels = f.colLabels = r.tokens;
    f.rowAxis = QStringLiteral("Query token");
    f.colAxis = QStringLiteral("Key token");
    return f;
}

render::HeatmapFigure patternPanel(const ForwardResult& r, const ViewState& s) {
    const auto nominal = r.internals.find("nominal_mask");
    std::vector<float> pattern;
    QString what;
    if (nominal != r.internals.end()) {
        const std::size_t t = std::size_t(r.tokenCount());
        const float* block =
            nominal->second.data() + std::size_t(s.head % nominal->second.dim(0)) * t * t;
        pattern.assign(block, block + t * t);
        const QString preset =
            r.variant.mask ? QString::fromStdString(r.variant.mask->preset) : QString();
        what = preset.isEmpty() ? QStringLiteral("Nominal mask")
                                : QStringLiteral("Nominal mask (%1)").arg(preset);
    } else {
        pattern = allowedPattern(r, s.layer, s.head);
        what = r.internals.count("mask") ? QStringLiteral("Mask the softmax obeys")
               : r.variant.kernel == variants::AttentionKernel::Softmax
                   ? QStringLiteral("Keys allowed (no mask)")
                   : QStringLiteral("Pairs the kernel reaches");
    }
    render::HeatmapFigure f = tokenMap(r, std::move(pattern));
    f.title = what + QStringLiteral(" · head %1").arg(s.head);
    f.colorBar = {render::Colormap::Blues, 0.0, 1.0, QStringLiteral("1 = allowed")};
    return f;
}

render::HeatmapFigure effectivePanel(const ForwardResult& r, const ViewState& s) {
    render::HeatmapFigure f = tokenMap(r, headAttention(r, s.layer, s.head));
    const float top = std::max(*std::max_element(f.values.begin(), f.values.end()), 1e-6f);
    f.title = QStringLiteral("Effective attention · layer %1 · head %2").arg(s.layer).arg(s.head);
    f.colorBar = {s.colormap, 0.0, top, QStringLiteral("Attention weight")};
    f.emphasisedRow = s.query;
    return f;
}

render::BarChartFigure headBars(const QString& title, std::vector<float> values,
                                const QString& axis, const ViewState& s) {
    render::BarChartFigure f;
    f.title = title;
    f.labels = headLabels(int(values.size()));
    f.values = std::move(values);
    f.valueAxis = axis;
    f.categoryAxis = QStringLiteral("Head");
    f.emphasised = s.head;
    return f;
}

QString caption(const ForwardResult& r, const SparsityNumbers& n, const ViewState& s) {
    const auto h = std::size_t(s.head);
    const QString kept = QStringLiteral("the variant keeps %1% of query–key pairs")
                             .arg(100.0 * n.density[h], 0, 'f', 1);
    if (r.variant.isVanilla())
        return QStringLiteral("Vanilla pass: nothing is dropped. Pick a mask preset or an "
                              "approximate kernel in the Variant panel.");
    if (n.massOutside.empty()) return QStringLiteral("Head %1: %2.").arg(s.head).arg(kept);
    return QStringLiteral("Head %1: %2% of the vanilla pass's attention falls outside "
                          "(mean over query tokens); %3.")
        .arg(s.head)
        .arg(100.0 * n.massOutside[h], 0, 'f', 1)
        .arg(kept);
}
} // namespace

SparsityNumbers sparsityNumbers(const ForwardResult& result, int layer) {
    SparsityNumbers numbers;
    const int heads = int(result.attention.dim(1));
    const bool withVanilla = !result.vanillaAttention.empty();
    for (int h = 0; h < heads; ++h) {
        const std::vector<float> allowed = allowedPattern(result, layer, h);
        numbers.density.push_back(densityOf(result, allowed));
        if (withVanilla) numbers.massOutside.push_back(massOutsideOf(result, allowed, layer, h));
    }
    return numbers;
}

render::PanelsFigure sparsityFigure(const ForwardResult& result, const ViewState& state) {
    if (const std::optional<QString> refusal = streamedRefusal(ViewKind::Sparsity, result))
        return {QStringLiteral("Sparsity · layer %1").arg(state.layer),
                {},
                1,
                {render::NotePanel{*refusal}}};
    const SparsityNumbers numbers = sparsityNumbers(result, state.layer);
    render::PanelsFigure f;
    f.title = QStringLiteral("Sparsity · layer %1").arg(state.layer);
    f.caption = caption(result, numbers, state);
    f.panels.emplace_back(patternPanel(result, state));
    f.panels.emplace_back(effectivePanel(result, state));
    f.panels.emplace_back(headBars(QStringLiteral("Density per head"), numbers.density,
                                   QStringLiteral("Share of pairs allowed"), state));
    if (!numbers.massOutside.empty())
        f.panels.emplace_back(headBars(QStringLiteral("Vanilla attention mass dropped, per head"),
                                       numbers.massOutside,
                                       QStringLiteral("Mass outside (mean per query)"), state));
    else
        f.panels.emplace_back(render::NotePanel{
            result.variant.isVanilla()
                ? QStringLiteral("The vanilla pass drops nothing.")
                : QStringLiteral("The vanilla pass runs with this view; it is on its way.")});
    return f;
}
} // namespace headlight::app
