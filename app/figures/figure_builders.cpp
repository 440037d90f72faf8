#include "figure_builders.h"

#include "circuits_figure.h"
#include "counted.h"
#include "features_figure.h"
#include "head_roles_figure.h"
#include "internals_figures.h"
#include "knn_figure.h"
#include "output_figures.h"
#include "position_figure.h"
#include "query_key_figures.h"
#include "routing_figures.h"
#include "sinks_figure.h"
#include "sparsity_figure.h"
#include "streamed_figures.h"

#include <algorithm>
#include <cmath>

namespace headlight::app {
namespace {

using render::ColorBar;
using render::Colormap;

int layersOf(const ForwardResult& r) {
    return r.layerCount();
}
int headsOf(const ForwardResult& r) {
    return r.headCount();
}

float largest(const std::vector<float>& values) {
    return values.empty() ? 0.0f : *std::max_element(values.begin(), values.end());
}

QString headName(const ViewState& s) {
    return s.averageHeads ? QStringLiteral("Layer %1 · mean of heads").arg(s.layer)
                          : QStringLiteral("Layer %1 · head %2").arg(s.layer).arg(s.head);
}

std::vector<float> selectedAttention(const ForwardResult& r, const ViewState& s) {
    return s.averageHeads ? layerMeanAttention(r, s.layer) : headAttention(r, s.layer, s.head);
}

// A funnel layer's map is pooled (variants/funnel_pooling.cpp); the trace shows it per token
// (tokenResolution in model/trace.h), and the title says so. Empty for a full-resolution layer.
QString funnelNote(const ForwardResult& r, int layer) {
    const auto lengths = r.internals.find("funnel_length");
    if (lengths == r.internals.end() || layer < 0 || layer >= int(lengths->second.size()))
        return {};
    const int queries = int(lengths->second.values()[std::size_t(layer)]);
    const int keys =
        layer == 0 ? r.tokenCount() : int(lengths->second.values()[std::size_t(layer - 1)]);
    if (queries == r.tokenCount() && keys == r.tokenCount()) return {};
    return QStringLiteral(" · funnel: %1 pooled × %2, drawn per token")
        .arg(queries == 1 ? QStringLiteral("1 query") : QStringLiteral("%1 queries").arg(queries),
             counted(keys, QStringLiteral("key")));
}

// A pooled layer's queries as runs of the tokens each covers: the block of funnel_merge [blocks, T]
// with that layer's row count. Empty for a full-resolution layer.
std::vector<int> pooledQueryGroups(const ForwardResult& r, int layer) {
    const auto lengths = r.internals.find("funnel_length");
    const auto merge = r.internals.find("funnel_merge");
    if (lengths == r.internals.end() || merge == r.internals.end() || layer < 0 ||
        layer >= int(lengths->second.size()))
        return {};
    const int queries = int(lengths->second.values()[std::size_t(layer)]);
    const int64_t tokens = merge->second.dim(1);
    if (queries == tokens) return {};
    for (int64_t b = 0; b < merge->second.dim(0); ++b) {
        const float* row = merge->second.data() + b * tokens;
        if (int(row[tokens - 1]) + 1 != queries) continue;
        std::vector<int> groups(std::size_t(queries), 0);
        for (int64_t t = 0; t < tokens; ++t)
            ++groups[std::size_t(row[t])];
        return groups;
    }
    return {};
}

// Rows of a pooled layer are labelled per pooled query, with every token it covers.
void labelPooledQueries(render::HeatmapFigure& f, const ForwardResult& r, int layer) {
    f.rowGroups = pooledQueryGroups(r, layer);
    if (!f.rowGroups.empty())
        f.rowAxis = QStringLiteral("Query · pooled: one row per group of tokens");
}

render::HeatmapFigure tokenHeatmap(const ForwardResult& r, std::vector<float> values) {
    render::HeatmapFigure f;
    f.rows = f.cols = r.tokenCount();
    f.values = std::move(values);
    f.rowLabels = f.colLabels = r.tokens;
    return f;
}

render::Figure attentionHeatmap(const ForwardResult& r, const ViewState& s) {
    render::HeatmapFigure f = tokenHeatmap(r, selectedAttention(r, s));
    f.title = headName(s) + QStringLiteral(" · attention") + funnelNote(r, s.layer);
    f.rowAxis = QStringLiteral("Query token");
    labelPooledQueries(f, r, s.layer);
    f.colAxis = QStringLiteral("Key token (attended to)");
    f.colorBar = {s.colormap, 0.0, std::max(largest(f.values), 1e-6f),
                  QStringLiteral("Attention weight")};
    // A signed map (a learned Linformer's A·F, Nyström's) on a diverging scale centred on 0.
    const float lowest =
        f.values.empty() ? 0.0f : *std::min_element(f.values.begin(), f.values.end());
    if (lowest < 0.0f) {
        const double extent = std::max(double(largest(f.values)), -double(lowest));
        f.colorBar = {Colormap::Diverging, -extent, extent,
                      QStringLiteral("Signed weight of each value token")};
        f.title += QStringLiteral(" (signed weights)");
    }
    f.emphasisedRow = s.query;
    return f;
}

render::Figure modelGrid(const ForwardResult& r, const ViewState& s) {
    render::ModelGridFigure f;
    f.title = QStringLiteral("All heads · attention (rows: query, columns: key)");
    f.layers = layersOf(r);
    f.heads = headsOf(r);
    f.tokens = r.tokenCount();
    f.attention.assign(r.attention.values().begin(), r.attention.values().end());
    f.colorBar = {s.colormap, 0.0, 1.0, QStringLiteral("Attention weight")};
    f.selectedLayer = s.layer;
    f.selectedHead = s.head;
    return f;
}

render::Figure tokenLines(const ForwardResult& r, const ViewState& s) {
    render::TokenLinesFigure f;
    f.title = headName(s) + QStringLiteral(" · who attends to whom");
    f.tokens = r.tokens;
    f.weights = selectedAttention(r, s);
    // A signed map (learned Linformer's A·F): a line's width and colour cannot show a sign, so only
    // the positive weights are drawn, and the title says so.
    if (std::any_of(f.weights.begin(), f.weights.end(), [](float w) { return w < 0.0f; })) {
        for (float& w : f.weights)
            w = std::max(w, 0.0f);
        f.title += QStringLiteral(" (positive weights of a signed map)");
    }
    f.colorBar = {Colormap::Blues, 0.0, std::max(largest(f.weights), 1e-6f),
                  QStringLiteral("Attention weight")};
    f.emphasisedQuery = s.query;
    return f;
}

// One panel per layer (or layer pair), heads left to right by ascending median.
std::vector<render::ViolinPanel> violinPanels(const ViolinSet& set, bool pairs) {
    std::vector<render::ViolinPanel> panels;
    for (std::size_t l = 0; l < set.order.size(); ++l) {
        render::ViolinPanel panel;
        panel.layer = int(l);
        panel.title = pairs ? QStringLiteral("Layers %1 → %2").arg(l).arg(l + 1)
                            : QStringLiteral("Layer %1").arg(l);
        const std::size_t heads = set.order[l].size();
        for (int64_t h : set.order[l]) {
            const analysis::Violin& v = set.violins[l * heads + std::size_t(h)];
            panel.violins.push_back(
                {int(h), v.summary.q1, v.summary.median, v.summary.q3, v.density});
        }
        panels.push_back(std::move(panel));
    }
    return panels;
}

render::Figure violins(const ForwardResult& r, const ViewState& s, bool jsd,
                       const CorpusStats* corpus) {
    const ViolinSet& set = corpus ? (jsd ? corpus->jsd : corpus->entropy)
                                  : (jsd ? r.stats.violins(r.attention, r.valid).jsd
                                         : r.stats.violins(r.attention, r.valid).entropy);
    if (set.order.empty())
        return render::EmptyFigure{
            QStringLiteral("Adjacent-layer JSD needs a model with two or more layers.")};
    render::ViolinFigure f;
    f.title = jsd ? QStringLiteral("JSD between the same head in adjacent layers, per query token")
                  : QStringLiteral("Attention entropy per query token, heads sorted by median");
    if (corpus)
        f.title +=
            QStringLiteral(" · corpus of %1").arg(counted(corpus->texts, QStringLiteral("text")));
    f.valueAxis = jsd ? QStringLiteral("JSD (bits)") : QStringLiteral("Entropy (nats)");
    f.grid = set.grid;
    f.panels = violinPanels(set, jsd);
    f.thresholds = jsd ? render::realFormerColors(kJsdLow, kJsdHigh)
                       : render::realFormerColors(kEntropyLow, kEntropyHigh);
    f.minValue = 0.0;
    f.maxValue = set.grid.empty() ? 1.0 : set.grid.back();
    f.selectedLayer = s.layer;
    f.selectedHead = s.head;
    return f;
}

render::Figure jsdMatrix(const ForwardResult& r, const ViewState& s) {
    const CostlyStats& costly = r.stats.costly(r.attention, r.valid);
    const std::vector<int64_t>& order = costly.leafOrder;
    const int n = int(order.size());
    const int heads = headsOf(r);
    render::HeatmapFigure f;
    f.title = QStringLiteral("Head × head JSD, clustered (average linkage)");
    f.rows = f.cols = n;
    for (int64_t a : order) {
        f.rowLabels << QStringLiteral("L%1 H%2").arg(a / heads).arg(a % heads);
        for (int64_t b : order)
            f.values.push_back(costly.headJsd.data()[a * n + b]);
    }
    f.colLabels = f.rowLabels;
    f.rowAxis = f.colAxis = QStringLiteral("Head (clustered order)");
    f.colorBar = {s.colormap, 0.0, std::max(largest(f.values), 1e-6f),
                  QStringLiteral("Mean JSD over query tokens (bits)")};
    const auto selected = std::find(order.begin(), order.end(), int64_t(s.layer * heads + s.head));
    f.emphasisedRow = selected == order.end() ? -1 : int(selected - order.begin());
    return f;
}

render::Figure rollout(const ForwardResult& r, const ViewState& s) {
    if (r.streamed) return streamedRolloutFigure(r, s);
    const auto values = r.stats.costly(r.attention, r.valid).rollout.values();
    render::HeatmapFigure f = tokenHeatmap(r, {values.begin(), values.end()});
    f.title = QStringLiteral("Attention rollout through all %1 (Abnar & Zuidema 2020)")
                  .arg(counted(layersOf(r), QStringLiteral("layer")));
    f.rowAxis = QStringLiteral("Position at the top layer");
    f.colAxis = QStringLiteral("Input token");
    f.colorBar = {s.colormap, 0.0, std::max(largest(f.values), 1e-6f),
                  QStringLiteral("Rollout weight")};
    f.emphasisedRow = s.query;
    return f;
}

render::Figure difference(const ForwardResult& r, const ViewState& s) {
    std::vector<float> a = headAttention(r, s.layer, s.head);
    const std::vector<float> b = layerMeanAttention(r, s.layer);
    float extent = 1e-6f;
    for (std::size_t i = 0; i < a.size(); ++i) {
        a[i] -= b[i];
        extent = std::max(extent, std::abs(a[i]));
    }
    render::HeatmapFigure f = tokenHeatmap(r, std::move(a));
    f.title = QStringLiteral("Layer %1 · head %2 minus the mean of layer %1's heads")
                  .arg(s.layer)
                  .arg(s.head);
    f.rowAxis = QStringLiteral("Query token");
    labelPooledQueries(f, r, s.layer);
    f.colAxis = QStringLiteral("Key token");
    f.colorBar = {Colormap::Diverging, -extent, extent, QStringLiteral("A − B attention")};
    f.emphasisedRow = s.query;
    return f;
}

render::Figure entropyViolins(const ForwardResult& r, const ViewState& s, const CorpusStats* c) {
    return violins(r, s, false, c);
}
render::Figure jsdViolins(const ForwardResult& r, const ViewState& s, const CorpusStats* c) {
    return violins(r, s, true, c);
}

// The lines the window's scrubber measured, with the marker at the checkpoint shown.
render::PanelsFigure trainingPanels(const ForwardResult&, const ViewState& s) {
    if (!s.training)
        return {QStringLiteral("Over training"),
                {},
                1,
                {render::NotePanel{QStringLiteral(
                    "Open a checkpoint of a zoo training run (resources/runs) or of a Hugging "
                    "Face repository with several revisions, and press \"Measure over "
                    "training\" in the Training bar under the view (from the command line: "
                    "headlight export --checkpoints SOURCE --view training).")}}};
    return trainingFigure(*s.training, s.checkpoint);
}

// A single-figure builder that reads no corpus.
template <render::Figure (*build)(const ForwardResult&, const ViewState&)>
render::Figure ofText(const ForwardResult& r, const ViewState& s, const CorpusStats*) {
    return build(r, s);
}

constexpr PassExtras kMapsOnly{};
constexpr PassExtras kVanillaPass{.vanillaPass = true};
constexpr PassExtras kOutputs{.outputs = true};
constexpr PassExtras kQueryKey{.queryKey = true};
constexpr PassExtras kSinks{.sinks = true};
constexpr PassExtras kFeatures{.features = true};
constexpr PassExtras kCircuits{.circuits = true};

using G = ViewGroup;
constexpr ViewRow kViews[] = {
    {ViewKind::Heatmap, "heatmap", "Heatmap", G::Attention,
     "one head's attention, query × key (--layer, --head)", kMapsOnly, ofText<attentionHeatmap>,
     nullptr},
    {ViewKind::ModelGrid, "model-grid", "All heads", G::Attention,
     "every head of every layer as a small attention map", kMapsOnly, ofText<modelGrid>, nullptr},
    {ViewKind::TokenLines, "token-lines", "Lines", G::Attention,
     "lines from query to key tokens, weighted (--layer, --head)", kMapsOnly, ofText<tokenLines>,
     nullptr},
    {ViewKind::EntropyViolins, "entropy-violins", "Entropy", G::Statistics,
     "attention entropy per head, one panel per layer (RealFormer bands)", kMapsOnly,
     entropyViolins, nullptr},
    {ViewKind::JsdViolins, "jsd-violins", "Layer JSD", G::Statistics,
     "JSD between the same head in adjacent layers (RealFormer bands)", kMapsOnly, jsdViolins,
     nullptr},
    {ViewKind::JsdMatrix, "head-jsd-matrix", "Head JSD", G::Statistics,
     "mean JSD between every pair of heads, clustered", kMapsOnly, ofText<jsdMatrix>, nullptr},
    {ViewKind::Rollout, "rollout", "Rollout", G::Attention, "attention rollout through all layers",
     kMapsOnly, ofText<rollout>, nullptr},
    {ViewKind::Difference, "difference", "Difference", G::Attention,
     "one head minus the mean of its layer's heads (--layer, --head)", kMapsOnly,
     ofText<difference>, nullptr},
    {ViewKind::Sparsity, "sparsity", "Sparsity", G::Attention,
     "nominal mask beside effective attention, density and dropped mass", kVanillaPass, nullptr,
     sparsityFigure},
    {ViewKind::Positions, "positions", "Positions", G::PositionsAndEmbeddings,
     "the position encoding in use: table, similarity, RoPE or ALiBi", kMapsOnly, nullptr,
     positionFigure},
    {ViewKind::EarlyExit, "early-exit", "Early exit", G::VariantInternals,
     "layers run per token and the exit signal (early-exit variants)", kMapsOnly, nullptr,
     earlyExitFigure},
    {ViewKind::LshBuckets, "lsh-buckets", "LSH", G::VariantInternals,
     "LSH bucket per token and head (the Reformer kernel)", kMapsOnly, nullptr, lshFigure},
    {ViewKind::MoeRouting, "moe-routing", "Experts", G::VariantInternals,
     "experts each token goes to, gate weights, expert load (MoE models)", kMapsOnly, nullptr,
     moeRoutingFigure},
    {ViewKind::ActPonder, "act-ponder", "Ponder", G::VariantInternals,
     "ACT halting probability per step and ponder count per token", kMapsOnly, nullptr,
     actPonderFigure},
    {ViewKind::LogitLens, "logit-lens", "Logit lens", G::Output,
     "top next token per layer and position through the final norm and LM head", kOutputs, nullptr,
     logitLensFigure},
    {ViewKind::VariantEffect, "variant-effect", "Effect", G::Output,
     "the variant vs exact attention: KL, top-1 and top-k flips, JSD per head", kOutputs, nullptr,
     variantEffectFigure},
    {ViewKind::KnnNeighbours, "knn-neighbours", "kNN-LM", G::VariantInternals,
     "kNN-LM: each position's datastore neighbours, p_LM, p_kNN, p_mix (--lambda re-mixes)",
     kMapsOnly, nullptr, knnNeighboursFigure},
    {ViewKind::QkEmbedding, "qk-embedding", "QK embedding", G::PositionsAndEmbeddings,
     "one head's queries and keys in one plane by PCA (AttentionViz; --layer, --head)", kQueryKey,
     nullptr, queryKeyFigure},
    {ViewKind::QkGrid, "qk-embedding-grid", "QK heads", G::PositionsAndEmbeddings,
     "every head's query-key embedding, layers × heads", kQueryKey, nullptr, queryKeyGridFigure},
    {ViewKind::HeadRoles, "head-roles", "Head roles", G::Statistics,
     "every head scored on the text (or on generated probes): previous-token, duplicate, "
     "induction (TransformerLens's detect_head), offset, sink",
     kMapsOnly, nullptr, headRolesFigure},
    {ViewKind::Sinks, "sinks", "Sinks", G::Statistics,
     "massive activations per layer, each head's sink share, and the sink taken away (zeroed, "
     "first token dropped, attention rule switched)",
     kSinks, nullptr, sinksFigure},
    {ViewKind::Training, "training", "Training", G::Statistics,
     "over a training run's checkpoints: loss, in-context-learning score and the strongest "
     "heads' roles (--checkpoints)",
     kMapsOnly, nullptr, trainingPanels},
    {ViewKind::Features, "features", "SAE", G::Output,
     "a sparse autoencoder's strongest features per token, its reconstruction and loss, and one "
     "feature's page (--sae, --feature)",
     kFeatures, nullptr, featuresFigure},
    {ViewKind::Circuits, "circuits", "Circuits", G::Statistics,
     "from the weights: Q-, K-, V-composition between layers, the strongest head pairs, each "
     "head's copying score",
     kCircuits, nullptr, circuitsFigure},
};
static_assert(std::size(kViews) == kAllViewCount);

// Why checked at compile time: the table is indexed by ViewKind.
constexpr bool inViewKindOrder() {
    for (int i = 0; i < kAllViewCount; ++i)
        if (int(kViews[i].kind) != i) return false;
    return true;
}
static_assert(inViewKindOrder());
} // namespace

const ViewRow& viewRow(ViewKind kind) {
    return kViews[std::size_t(kind)];
}

bool isPanelView(ViewKind kind) {
    return viewRow(kind).panels != nullptr;
}

QString viewName(ViewKind kind) {
    return QString::fromUtf8(viewRow(kind).name);
}

QString viewId(ViewKind kind) {
    return QString::fromUtf8(viewRow(kind).id);
}

QString viewSummary(ViewKind kind) {
    return QString::fromUtf8(viewRow(kind).summary);
}

QString viewGroupName(ViewGroup group) {
    switch (group) {
    case ViewGroup::Attention:
        return QStringLiteral("Attention");
    case ViewGroup::Statistics:
        return QStringLiteral("Statistics");
    case ViewGroup::PositionsAndEmbeddings:
        return QStringLiteral("Embeddings");
    case ViewGroup::VariantInternals:
        return QStringLiteral("Internals");
    case ViewGroup::Output:
        return QStringLiteral("Output");
    }
    return {};
}

void shapeLayerHeadGrid(render::HeatmapFigure& figure, int layers, int heads) {
    figure.rows = layers;
    figure.cols = heads;
    for (int l = 0; l < layers; ++l)
        figure.rowLabels << QStringLiteral("Layer %1").arg(l);
    for (int h = 0; h < heads; ++h)
        figure.colLabels << QString::number(h);
    figure.rowAxis = QStringLiteral("Layer");
    figure.colAxis = QStringLiteral("Head");
}

std::vector<float> headAttention(const ForwardResult& result, int layer, int head) {
    if (result.streamed) return *result.streamed->map(layer, head);
    const std::size_t t = std::size_t(result.tokenCount());
    const float* block =
        result.attention.data() +
        (std::size_t(layer) * std::size_t(headsOf(result)) + std::size_t(head)) * t * t;
    return {block, block + t * t};
}

std::vector<float> layerMeanAttention(const ForwardResult& result, int layer) {
    if (result.streamed) return *result.streamed->map(layer, analysis::AttentionAtlas::kAllHeads);
    const int heads = headsOf(result);
    std::vector<float> mean(std::size_t(result.tokenCount()) * std::size_t(result.tokenCount()),
                            0.0f);
    for (int h = 0; h < heads; ++h) {
        const std::vector<float> one = headAttention(result, layer, h);
        for (std::size_t i = 0; i < mean.size(); ++i)
            mean[i] += one[i] / float(heads);
    }
    return mean;
}

render::Figure buildFigure(ViewKind kind, const ForwardResult* result, const ViewState& state,
                           const CorpusStats* corpus) {
    if (!result || result->tokenCount() == 0)
        return render::EmptyFigure{
            QStringLiteral("Open a checkpoint folder (File ▸ Open, Ctrl+O) and type "
                           "some text above: the views follow as you type.")};
    if (const std::optional<QString> refusal = streamedRefusal(kind, *result))
        return render::EmptyFigure{*refusal};
    if (const auto build = viewRow(kind).figure) return build(*result, state, corpus);
    return render::EmptyFigure{
        QStringLiteral("The %1 view combines several figures and is drawn in the window only.")
            .arg(viewName(kind))};
}

render::PanelsFigure buildPanels(ViewKind kind, const ForwardResult* result,
                                 const ViewState& state) {
    if (!result || result->tokenCount() == 0)
        return {{},
                {},
                1,
                {render::NotePanel{
                    QStringLiteral("Open a checkpoint folder (File ▸ Open, Ctrl+O) and type some "
                                   "text above: the views follow as you type.")}}};
    if (const auto build = viewRow(kind).panels) return build(*result, state);
    return {};
}
} // namespace headlight::app
