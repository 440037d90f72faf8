#include "internals_figures.h"

#include "counted.h"

#include <algorithm>
#include <numeric>

namespace headlight::app {
namespace {

using Criterion = variants::EarlyExit::Criterion;

QString criterionText(const variants::EarlyExit& exit) {
    switch (exit.criterion) {
    case Criterion::Entropy:
        return QStringLiteral("entropy of the next-token distribution < %1 nats (DeeBERT)")
            .arg(double(exit.threshold));
    case Criterion::Patience:
        return QStringLiteral("top token unchanged for %1 (PABEE)")
            .arg(counted(exit.patience, QStringLiteral("layer")));
    case Criterion::SoftmaxResponse:
        return QStringLiteral("top-1 probability ≥ %1 (CALM)").arg(double(exit.threshold));
    case Criterion::Saturation:
        return QStringLiteral("cos(h_l, h_l−1) ≥ %1 (CALM saturation)").arg(double(exit.threshold));
    case Criterion::None:
        break;
    }
    return {};
}

render::BarChartFigure exitBars(const ForwardResult& r, const Tensor& exitLayer, int layers) {
    render::BarChartFigure f;
    f.title = QStringLiteral("Layers run per token");
    f.labels = r.tokens;
    f.values.assign(exitLayer.values().begin(), exitLayer.values().end());
    f.valueAxis = QStringLiteral("Layers run");
    f.categoryAxis = QStringLiteral("Token");
    f.maxValue = layers;
    f.decimals = 0;
    return f;
}

render::HeatmapFigure exitSignal(const ForwardResult& r, const Tensor& signal, const ViewState& s) {
    render::HeatmapFigure f;
    f.title = QStringLiteral("Exit signal per layer");
    f.rows = int(signal.dim(0));
    f.cols = int(signal.dim(1));
    f.values.assign(signal.values().begin(), signal.values().end());
    for (int l = 0; l < f.rows; ++l)
        f.rowLabels << QStringLiteral("Layer %1").arg(l);
    f.colLabels = r.tokens;
    f.rowAxis = QStringLiteral("Layer");
    f.colAxis = QStringLiteral("Token");
    const auto [low, high] = std::minmax_element(f.values.begin(), f.values.end());
    f.colorBar = {s.colormap, *low, std::max(*high, *low + 1e-6f),
                  QStringLiteral("Criterion value")};
    return f;
}

render::CategoryGridFigure bucketGrid(const ForwardResult& r, const Tensor& buckets,
                                      const Tensor* order, int bucketCount) {
    render::CategoryGridFigure f;
    f.rows = int(buckets.dim(0));
    f.cols = int(buckets.dim(1));
    for (int h = 0; h < f.rows; ++h) {
        f.rowLabels << QStringLiteral("Head %1").arg(h);
        for (int k = 0; k < f.cols; ++k) {
            const int token = order ? int(order->data()[h * f.cols + k]) : k;
            const bool shown = token >= 0 && token < r.tokenCount();
            f.categories.push_back(shown ? int(buckets.data()[h * f.cols + token]) : -1);
            if (order) f.cellText << (shown ? r.tokens.value(token) : QString());
        }
    }
    f.rowAxis = QStringLiteral("Head");
    f.legendTitle = QStringLiteral("Bucket");
    f.categoryCount = bucketCount;
    if (order) {
        f.title = QStringLiteral("Tokens sorted by bucket (the order LSH attends in)");
        f.colAxis = QStringLiteral("Sorted position →");
    } else {
        f.title = QStringLiteral("Bucket of each token");
        f.colLabels = r.tokens;
        f.colAxis = QStringLiteral("Token (text order)");
    }
    return f;
}
} // namespace

const Tensor* internalOf(const std::map<std::string, Tensor>& internals, const char* name) {
    const auto found = internals.find(name);
    return found == internals.end() ? nullptr : &found->second;
}

const std::map<std::string, Tensor>& layerInternalsOf(const ForwardResult& result, int layer) {
    static const std::map<std::string, Tensor> kNone;
    return layer >= 0 && result.layerInternals.size() > std::size_t(layer)
               ? result.layerInternals[std::size_t(layer)]
               : kNone;
}

render::PanelsFigure earlyExitFigure(const ForwardResult& result, const ViewState& state) {
    render::PanelsFigure f;
    f.title = QStringLiteral("Early exit");
    const Tensor* exitLayer = internalOf(result.internals, "exit_layer");
    const Tensor* signal = internalOf(result.internals, "exit_signal");
    if (!exitLayer || !signal) {
        f.panels = {render::NotePanel{QStringLiteral(
            "This pass has no early exit. Pick a criterion under “Early exit” in the Variant "
            "panel: saturation works on every model; entropy, patience and softmax response "
            "read each layer through a tied LM head (GPT-2).")}};
        return f;
    }
    const int layers = int(signal->dim(0));
    const auto values = exitLayer->values();
    const double mean = std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
    f.caption = QStringLiteral("Exit when %1 · mean %2 of %3 run")
                    .arg(criterionText(result.variant.earlyExit))
                    .arg(mean, 0, 'f', 2)
                    .arg(counted(layers, QStringLiteral("layer")));
    f.columns = 1;
    f.panels = {exitBars(result, *exitLayer, layers), exitSignal(result, *signal, state)};
    return f;
}

render::PanelsFigure lshFigure(const ForwardResult& result, const ViewState& state) {
    render::PanelsFigure f;
    f.title = QStringLiteral("Reformer LSH buckets · layer %1").arg(state.layer);
    const auto& layer = layerInternalsOf(result, state.layer);
    const Tensor* buckets = internalOf(layer, "lsh_buckets");
    const Tensor* order = internalOf(layer, "lsh_order");
    if (!buckets || !order) {
        f.panels = {render::NotePanel{QStringLiteral(
            "This pass has no LSH buckets. Pick “Reformer LSH attention” as the attention kernel "
            "in the Variant panel.")}};
        return f;
    }
    const variants::VariantSpec& v = result.variant;
    f.caption = QStringLiteral("Angular LSH, %1 buckets, round 1 of %2: a query attends only to "
                               "keys in its bucket, within chunks of %3 sorted tokens.")
                    .arg(v.lshBuckets)
                    .arg(v.lshRounds)
                    .arg(v.lshChunk);
    f.columns = 1;
    f.panels = {bucketGrid(result, *buckets, nullptr, v.lshBuckets),
                bucketGrid(result, *buckets, order, v.lshBuckets)};
    return f;
}
} // namespace headlight::app
