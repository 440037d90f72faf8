#pragma once
// ForwardResult + what the user selected -> the figure data each view paints (render/figures).
// The only place where model-shaped data ([L, H, T, T] attention, per-head statistics) turns
// into figure-shaped data (matrices, labels, colour scales).

#include "figures/figure.h"
#include "figures/panels.h"
#include "forward_runner.h"
#include "probe_head_roles.h"
#include "training_figure.h"

#include <QString>
#include <memory>

namespace headlight::app {

enum class ViewKind {
    Heatmap,        // one head (or the layer's mean), query × key
    ModelGrid,      // all L × H heads
    TokenLines,     // query tokens to key tokens
    EntropyViolins, // per layer × head, RealFormer bands (nats)
    JsdViolins,     // adjacent layers, same head (bits)
    JsdMatrix,      // head × head mean JSD, clustered
    Rollout,        // attention rollout across layers
    Difference,     // selected head − mean of its layer
    Sparsity,       // nominal mask | effective attention, density and dropped mass per head
    Positions,      // the position encoding the model and variant use
    EarlyExit,      // layers run per token, exit signal per layer
    LshBuckets,     // Reformer LSH bucket per token and head
    MoeRouting,     // experts chosen per token, gate weights, expert load
    ActPonder,      // ACT halting probability per step and ponder count per token
    LogitLens,      // top next token per layer × position through the final norm and LM head
    VariantEffect,  // the variant against exact attention: KL, top-1 and top-k, JSD per head
    KnnNeighbours,  // kNN-LM: each position's neighbours in the datastore, p_LM, p_kNN, p_mix
    QkEmbedding,    // one head's queries and keys by PCA (AttentionViz), its layer's heads
    QkGrid,         // every layer × head's query-key embedding
    HeadRoles,      // every head scored for previous-token, duplicate, induction, offset, sink
    Sinks,          // massive activations, each head's sink share, the sink taken away
    Training,       // loss, ICL score and the strongest heads' roles over a training series
    Features,       // an SAE's features per token, its reconstruction, one feature's page
    Circuits,       // Q-, K-, V-composition between layers, the strongest pairs, copying per head
};
// The first kViewCount views are one render::Figure each (what `headlight export` writes); the
// panel views after them combine several figures (render::PanelsFigure).
constexpr int kViewCount = 8;
constexpr int kAllViewCount = 24;

struct ViewState {
    int layer = 0;
    int head = 0;
    int query = -1;            // the emphasised query token, -1 for none
    bool averageHeads = false; // heatmap and token lines show the layer's mean over heads
    render::Colormap colormap = render::Colormap::Viridis;
    double knnLambda = -1.0; // the kNN-LM view's re-mix weight; negative: the pass's own λ
    // The Training view's lines, measured over a series (the window's scrubber), and the
    // checkpoint its marker stands at; none until measured.
    std::shared_ptr<const TrainingCurves> training;
    int checkpoint = -1;
    int feature = -1; // the Features view's feature page; -1: every token's strongest features
    // The head-roles view's scores on generated probes (the window's head table scores them);
    // none: it scores the text.
    std::shared_ptr<const ProbeHeadRoles> probeRoles;
};

// Where the window's view bar puts a view.
enum class ViewGroup { Attention, Statistics, PositionsAndEmbeddings, VariantInternals, Output };
QString viewGroupName(ViewGroup group);

// A view as the window, the CLI, scenes and lessons know it: one row per ViewKind, in its order.
struct ViewRow {
    ViewKind kind;
    const char* id;      // the CLI's and the scenes' name: "heatmap", "entropy-violins", ...
    const char* name;    // the view bar's label and the View menu's entry
    ViewGroup group;     // its place in the view bar
    const char* summary; // one line, for `headlight export --list-views`
    PassExtras needs;    // what the pass must compute beyond the maps for this view
    // Exactly one of the two is set: a single figure (exported by `headlight export`), or a view
    // that combines several (render::PanelsFigure).
    render::Figure (*figure)(const ForwardResult&, const ViewState&, const CorpusStats*);
    render::PanelsFigure (*panels)(const ForwardResult&, const ViewState&);
};
const ViewRow& viewRow(ViewKind kind);
bool isPanelView(ViewKind kind);
QString viewName(ViewKind kind);
QString viewId(ViewKind kind);
QString viewSummary(ViewKind kind);

// `result` may be null (no model or no text yet): the figure then says what to do. With
// `corpus`, the entropy and JSD violins show the corpus instead of the current text.
render::Figure buildFigure(ViewKind kind, const ForwardResult* result, const ViewState& state,
                           const CorpusStats* corpus = nullptr);
render::PanelsFigure buildPanels(ViewKind kind, const ForwardResult* result,
                                 const ViewState& state);

// A layers × heads grid (every head one cell): its size, "Layer l" rows, head-number columns and
// the two axis titles; the caller fills in the values and the colour bar.
void shapeLayerHeadGrid(render::HeatmapFigure& figure, int layers, int heads);

// [T, T] attention of one head, or the mean over the layer's heads.
std::vector<float> headAttention(const ForwardResult& result, int layer, int head);
std::vector<float> layerMeanAttention(const ForwardResult& result, int layer);

// Entropy (1.5 / 4.5 nats) and adjacent-layer JSD (0.25 / 0.75 bits) bands of the RealFormer
// paper (He et al. 2021, "RealFormer: Transformer Likes Residual Attention").
constexpr double kEntropyLow = 1.5, kEntropyHigh = 4.5;
constexpr double kJsdLow = 0.25, kJsdHigh = 0.75;
} // namespace headlight::app
