#include "streamed_figures.h"

#include "analysis/streamed_attention.h"
#include "counted.h"

#include <QLocale>
#include <algorithm>

namespace headlight::app {
namespace {

int shownHead(const ViewState& state) {
    return state.averageHeads ? analysis::AttentionAtlas::kAllHeads : state.head;
}

// The maps `kind` reads for `state`: (layer, head) pairs, a head of kAllHeads for the mean.
std::vector<std::pair<int, int>> mapsNeeded(ViewKind kind, const ViewState& state) {
    switch (kind) {
    case ViewKind::Heatmap:
    case ViewKind::TokenLines:
        return {{state.layer, shownHead(state)}};
    case ViewKind::Difference:
        return {{state.layer, state.head}, {state.layer, analysis::AttentionAtlas::kAllHeads}};
    default:
        return {};
    }
}

QString mapBytes(const ForwardResult& result) {
    const double bytes = double(result.layerCount()) * double(result.headCount()) *
                         double(result.tokenCount()) * double(result.tokenCount()) * 4.0;
    return QLocale::system().formattedDataSize(qint64(bytes), 1, QLocale::DataSizeSIFormat);
}
} // namespace

bool streamedViewReady(ViewKind kind, const ForwardResult& result, const ViewState& state) {
    if (!result.streamed) return true;
    if (kind == ViewKind::Rollout) return result.streamed->hasRollout(state.query);
    const auto maps = mapsNeeded(kind, state);
    return std::all_of(maps.begin(), maps.end(), [&result](const std::pair<int, int>& map) {
        return result.streamed->hasMap(map.first, map.second);
    });
}

void buildStreamedView(ViewKind kind, const ForwardResult& result, const ViewState& state) {
    if (!result.streamed) return;
    if (kind == ViewKind::Rollout) {
        result.streamed->rollout(state.query);
        return;
    }
    for (const auto& [layer, head] : mapsNeeded(kind, state))
        result.streamed->map(layer, head);
}

QString streamedWaitNote(ViewKind kind, const ForwardResult& result, const ViewState& state) {
    const QString tokens = counted(result.tokenCount(), QStringLiteral("token"));
    if (kind == ViewKind::Rollout)
        return QStringLiteral("Building the rollout through all %1 from their queries and keys "
                              "(%2)…")
            .arg(counted(result.layerCount(), QStringLiteral("layer")), tokens);
    const QString subject =
        state.averageHeads || kind == ViewKind::Difference
            ? QStringLiteral("layer %1's maps").arg(state.layer)
            : QStringLiteral("layer %1 · head %2's map").arg(state.layer).arg(state.head);
    return QStringLiteral("Building %1 from its queries and keys (%2)…").arg(subject, tokens);
}

std::optional<QString> streamedRefusal(ViewKind kind, const ForwardResult& result) {
    if (!result.streamed) return std::nullopt;
    const QString why =
        QStringLiteral("At %1 the pass keeps queries and keys, not its %2 of maps: ")
            .arg(counted(result.tokenCount(), QStringLiteral("token")), mapBytes(result));
    switch (kind) {
    case ViewKind::ModelGrid:
        return why + QStringLiteral("the Heatmap tab builds the selected head's map, and the "
                                    "Atlas tab shows any layer at any length.");
    case ViewKind::JsdMatrix:
        return why + QStringLiteral("head × head JSD compares every pair of heads' maps; the "
                                    "Layer JSD tab compares heads layer to layer at this length, "
                                    "or shorten the text to %1 tokens.")
                         .arg(QLocale::system().toString(qlonglong(kStreamedPassTokens)));
    case ViewKind::Sparsity:
        return why + QStringLiteral("the sparsity view reads every head's map and the vanilla "
                                    "pass's; the Atlas tab's mask overlay shows a layer at any "
                                    "length, or shorten the text to %1 tokens.")
                         .arg(QLocale::system().toString(qlonglong(kStreamedPassTokens)));
    default:
        return std::nullopt;
    }
}

render::Figure streamedRolloutFigure(const ForwardResult& result, const ViewState& state) {
    const QString layers = counted(result.layerCount(), QStringLiteral("layer"));
    const bool full = result.streamed->fullRollout();
    if (!full && state.query < 0)
        return render::EmptyFigure{
            QStringLiteral("Past %1 tokens the rollout is built one query at a time: choose a "
                           "query (a token in the window's strip, or a scene's selection.query) "
                           "to see what its position draws from.")
                .arg(QLocale::system().toString(qlonglong(analysis::kFullRolloutTokens)))};
    const std::shared_ptr<const std::vector<float>> values = result.streamed->rollout(state.query);
    render::HeatmapFigure f;
    f.rows = full ? result.tokenCount() : 1;
    f.cols = result.tokenCount();
    f.values = *values;
    f.colLabels = result.tokens;
    f.rowLabels = full ? result.tokens : QStringList{result.tokens[state.query]};
    f.title = QStringLiteral("Attention rollout through all %1 (Abnar & Zuidema 2020)").arg(layers);
    if (!full) f.title += QStringLiteral(" · the row of query %1").arg(state.query);
    f.rowAxis = full ? QStringLiteral("Position at the top layer") : QStringLiteral("Query");
    f.colAxis = QStringLiteral("Input token");
    const float high = values->empty() ? 0.0f : *std::max_element(values->begin(), values->end());
    f.colorBar = {state.colormap, 0.0, std::max(high, 1e-6f), QStringLiteral("Rollout weight")};
    f.emphasisedRow = full ? state.query : -1;
    return f;
}
} // namespace headlight::app
