#include "routing_figures.h"

#include "counted.h"
#include "internals_figures.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace headlight::app {
namespace {

// The experts a layer has: one more than the largest expert chosen anywhere, or the router's width.
int expertCount(const ForwardResult& r) {
    int experts = 0;
    for (const auto& layer : r.layerInternals) {
        if (const Tensor* logits = internalOf(layer, "router_logits"))
            experts = std::max(experts, int(logits->dim(1)));
        if (const Tensor* choice = internalOf(layer, "expert_choice"))
            for (const float e : choice->values())
                experts = std::max(experts, int(e) + 1);
    }
    return experts;
}

QString routingName(const std::map<std::string, Tensor>& layer, int k) {
    if (!internalOf(layer, "router_logits"))
        return QStringLiteral("Hash routing (Roller et al. 2021)");
    return k == 1 ? QStringLiteral("Top-1 routing (Switch, Fedus et al. 2021)")
                  : QStringLiteral("Top-%1 routing (GShard, Lepikhin et al. 2020)").arg(k);
}

// Experts × tokens: the gate weight of each chosen expert, 0 where the token did not go.
render::HeatmapFigure gateWeights(const ForwardResult& r, const Tensor& choice,
                                  const Tensor& weight, int experts, const ViewState& s) {
    render::HeatmapFigure f;
    f.title = QStringLiteral("Gate weight of the chosen experts · layer %1").arg(s.layer);
    f.rows = experts;
    f.cols = r.tokenCount();
    f.values.assign(std::size_t(f.rows * f.cols), 0.0f);
    const int64_t k = choice.dim(1);
    for (int t = 0; t < f.cols; ++t)
        for (int64_t c = 0; c < k; ++c)
            f.values[std::size_t(int(choice.data()[t * k + c]) * f.cols + t)] =
                weight.data()[t * k + c];
    for (int e = 0; e < experts; ++e)
        f.rowLabels << QStringLiteral("Expert %1").arg(e);
    f.colLabels = r.tokens;
    f.rowAxis = QStringLiteral("Expert");
    f.colAxis = QStringLiteral("Token");
    f.colorBar = {s.colormap, 0.0, 1.0, QStringLiteral("Gate weight")};
    return f;
}

// Layers × experts: the share of the tokens' choices that went to each expert.
render::HeatmapFigure loadPerLayer(const ForwardResult& r, int experts, const ViewState& s) {
    render::HeatmapFigure f;
    f.title = QStringLiteral("Expert load per layer (share of choices)");
    f.rows = int(r.layerInternals.size());
    f.cols = experts;
    f.values.assign(std::size_t(f.rows * f.cols), 0.0f);
    for (int l = 0; l < f.rows; ++l) {
        f.rowLabels << QStringLiteral("Layer %1").arg(l);
        const Tensor* choice = internalOf(r.layerInternals[std::size_t(l)], "expert_choice");
        if (!choice) continue;
        for (const float e : choice->values())
            f.values[std::size_t(l * f.cols + int(e))] += 1.0f / float(choice->size());
    }
    for (int e = 0; e < experts; ++e)
        f.colLabels << QString::number(e);
    f.rowAxis = QStringLiteral("Layer");
    f.colAxis = QStringLiteral("Expert");
    f.colorBar = {s.colormap, 0.0, 1.0, QStringLiteral("Share of choices")};
    return f;
}

render::BarChartFigure tokensPerExpert(const Tensor& choice, int experts, const ViewState& s) {
    render::BarChartFigure f;
    f.title = QStringLiteral("Tokens per expert · layer %1").arg(s.layer);
    f.values.assign(std::size_t(experts), 0.0f);
    for (const float e : choice.values())
        f.values[std::size_t(int(e))] += 1.0f;
    for (int e = 0; e < experts; ++e)
        f.labels << QString::number(e);
    f.valueAxis = QStringLiteral("Tokens routed");
    f.categoryAxis = QStringLiteral("Expert");
    f.maxValue = std::max(1.0f, *std::max_element(f.values.begin(), f.values.end()));
    f.decimals = 0;
    return f;
}

// Steps × tokens of the halting probability. A token runs N steps (ponder N + R less its
// remainder R); its cells after those are "halted", not a probability of 0.
render::HeatmapFigure haltingMap(const ForwardResult& r, const Tensor& halting,
                                 const Tensor& ponder, const Tensor& remainder,
                                 const ViewState& s) {
    render::HeatmapFigure f;
    f.title = QStringLiteral("Halting probability per step");
    f.rows = int(halting.dim(0));
    f.cols = int(halting.dim(1));
    f.values.assign(halting.values().begin(), halting.values().end());
    f.absent.assign(f.values.size(), false);
    for (int t = 0; t < f.cols; ++t) {
        const auto k = std::size_t(t);
        const int run = int(std::lround(ponder.values()[k] - remainder.values()[k]));
        for (int step = run; step < f.rows; ++step)
            f.absent[std::size_t(step) * std::size_t(f.cols) + k] = true;
    }
    f.absentLabel = QStringLiteral("halted");
    for (int step = 0; step < f.rows; ++step)
        f.rowLabels << QStringLiteral("Step %1").arg(step + 1);
    f.colLabels = r.tokens;
    f.rowAxis = QStringLiteral("Step");
    f.colAxis = QStringLiteral("Token");
    f.colorBar = {s.colormap, 0.0, 1.0, QStringLiteral("Halting probability")};
    return f;
}

render::BarChartFigure ponderBars(const ForwardResult& r, const Tensor& ponder, int steps) {
    render::BarChartFigure f;
    f.title = QStringLiteral("Ponder count N + R per token");
    f.labels = r.tokens;
    f.values.assign(ponder.values().begin(), ponder.values().end());
    f.valueAxis = QStringLiteral("N + R");
    f.categoryAxis = QStringLiteral("Token");
    f.maxValue =
        std::max(double(steps) + 1.0, double(*std::max_element(f.values.begin(), f.values.end())));
    f.decimals = 2;
    return f;
}
} // namespace

render::PanelsFigure moeRoutingFigure(const ForwardResult& result, const ViewState& state) {
    render::PanelsFigure f;
    f.title = QStringLiteral("Mixture of experts · layer %1").arg(state.layer);
    const auto& layer = layerInternalsOf(result, state.layer);
    const Tensor* choice = internalOf(layer, "expert_choice");
    const Tensor* weight = internalOf(layer, "expert_weight");
    if (!choice || !weight) {
        f.panels = {render::NotePanel{QStringLiteral(
            "This pass has no expert routing. Open a mixture-of-experts zoo model (moe_top2, "
            "moe_switch, moe_hash) or a zoo checkpoint whose config has \"ffn\": {\"experts\": …}.")}};
        return f;
    }
    const int experts = expertCount(result), k = int(choice->dim(1));
    const render::BarChartFigure load = tokensPerExpert(*choice, experts, state);
    const auto [fewest, most] = std::minmax_element(load.values.begin(), load.values.end());
    f.caption = QStringLiteral("%1 over %2 · busiest expert: %3, idlest: %4")
                    .arg(routingName(layer, k), counted(experts, QStringLiteral("expert")),
                         counted(int(*most), QStringLiteral("token")))
                    .arg(int(*fewest));
    f.columns = 1; // the experts × tokens map needs the full width
    f.panels = {gateWeights(result, *choice, *weight, experts, state), load,
                loadPerLayer(result, experts, state)};
    return f;
}

render::PanelsFigure actPonderFigure(const ForwardResult& result, const ViewState& state) {
    render::PanelsFigure f;
    f.title = QStringLiteral("Adaptive computation time (Universal Transformer)");
    const Tensor* halting = internalOf(result.internals, "halting_probability");
    const Tensor* ponder = internalOf(result.internals, "ponder");
    const Tensor* remainder = internalOf(result.internals, "remainder");
    if (!halting || !ponder || !remainder) {
        f.panels = {render::NotePanel{QStringLiteral(
            "This pass has no ACT halting. Open the zoo's ut_act model (addition) or a zoo "
            "checkpoint whose config has \"act\": {\"max_steps\": …}.")}};
        return f;
    }
    const auto values = ponder->values();
    const double mean = std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
    const auto [least, most] = std::minmax_element(values.begin(), values.end());
    f.caption = QStringLiteral("Halting after Graves (2016) · ponder N + R: mean %1, from %2 to "
                               "%3 · %4 run")
                    .arg(mean, 0, 'f', 2)
                    .arg(double(*least), 0, 'f', 2)
                    .arg(double(*most), 0, 'f', 2)
                    .arg(counted(halting->dim(0), QStringLiteral("step")));
    f.columns = 1;
    f.panels = {haltingMap(result, *halting, *ponder, *remainder, state),
                ponderBars(result, *ponder, int(halting->dim(0)))};
    return f;
}
} // namespace headlight::app
