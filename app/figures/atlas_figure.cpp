#include "atlas_figure.h"

#include "counted.h"
#include "provenance.h"
#include "scene_files.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <algorithm>

namespace headlight::app {
namespace {

// Row or column labels: the tokens at one token a tile, else each tile's first position.
QStringList tileLabels(const QStringList& tokens, int64_t from, int64_t count, int64_t tile) {
    QStringList labels;
    for (int64_t i = 0; i < count; ++i)
        labels << (tile == 1 ? tokens.value(int(from + i)) : QString::number(from + i * tile));
    return labels;
}
} // namespace

render::ColorBar atlasColorBar(const std::vector<float>& values, int64_t tile,
                               render::Colormap map) {
    std::vector<float> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    const float largest = sorted.empty() ? 1e-6f : std::max(sorted.back(), 1e-6f);
    const float clip = sorted.empty()
                           ? largest
                           : std::max(sorted[std::size_t(double(sorted.size() - 1) * 0.99)], 1e-6f);
    const bool clipped = tile > 1 && clip < largest;
    return {map, 0.0, clipped ? clip : largest,
            clipped ? QStringLiteral("Weight (top 1% clipped)")
                    : QStringLiteral("Attention weight")};
}

QString atlasSubject(int layer, int head) {
    return QStringLiteral("Layer %1, %2")
        .arg(layer)
        .arg(head == analysis::AttentionAtlas::kAllHeads ? QStringLiteral("mean of heads")
                                                         : QStringLiteral("head %1").arg(head));
}

render::HeatmapFigure atlasFigure(const analysis::AtlasTiles& tiles, const QStringList& tokens,
                                  const QString& subject, analysis::TilePooling pooling,
                                  render::Colormap map) {
    render::HeatmapFigure f;
    const auto& r = tiles.region;
    const QString pooled = tiles.tile == 1
                               ? QStringLiteral("exact weights")
                               : QStringLiteral("%1 of %2 × %2-token tiles")
                                     .arg(pooling == analysis::TilePooling::Max ? "max" : "mean")
                                     .arg(tiles.tile);
    f.title = QStringLiteral("%1 · atlas, queries %2–%3 × keys %4–%5 (%6)")
                  .arg(subject)
                  .arg(r.q0)
                  .arg(r.q1 - 1)
                  .arg(r.k0)
                  .arg(r.k1 - 1)
                  .arg(pooled);
    f.rows = int(tiles.rows);
    f.cols = int(tiles.cols);
    f.values = tiles.values;
    f.rowLabels = tileLabels(tokens, r.q0, tiles.rows, tiles.tile);
    f.colLabels = tileLabels(tokens, r.k0, tiles.cols, tiles.tile);
    f.rowAxis = tiles.tile == 1 ? QStringLiteral("Query token") : QStringLiteral("Query position");
    f.colAxis = tiles.tile == 1 ? QStringLiteral("Key token (attended to)")
                                : QStringLiteral("Key position (attended to)");
    f.colorBar = atlasColorBar(f.values, tiles.tile, map);
    return f;
}

analysis::AtlasTiles atlasPageTiles(const analysis::AttentionAtlas& atlas,
                                    const analysis::AtlasRegion& region,
                                    analysis::TilePooling pooling) {
    return atlas.tiles(region, analysis::AttentionAtlas::tileFor(region, kAtlasCellsPerSide),
                       pooling);
}

render::FigureCaption atlasCaption(const LoadedModel& loaded, const QString& text, int64_t tokens) {
    const ModelSpec& spec = loaded.model->spec();
    render::FigureCaption caption;
    caption.model = QStringLiteral("%1 (%2, %3 × %4)")
                        .arg(QFileInfo(QDir::cleanPath(loaded.folder)).fileName(),
                             QString::fromLatin1(architectureName(spec.architecture)),
                             counted(spec.layers, QStringLiteral("layer")),
                             counted(spec.heads, QStringLiteral("head")));
    caption.variant = QStringLiteral("vanilla");
    const QString simple = text.simplified();
    caption.text = QStringLiteral("%1 (%2)").arg(
        simple.size() > 40 ? simple.left(40) + QStringLiteral("…") : simple,
        counted(int(tokens), QStringLiteral("token")));
    return caption;
}

io::Scenario atlasScenario(const LoadedModel& loaded, const QString& text, int layer, int head) {
    io::Scenario scenario;
    scenario.model = sceneModelName(loaded.folder);
    scenario.view = "atlas";
    scenario.text = text.toStdString(); // whole, so that reproduce runs the same text
    const bool mean = head == analysis::AttentionAtlas::kAllHeads;
    scenario.selection.layer = layer;
    scenario.selection.head = mean ? 0 : head;
    scenario.selection.average = mean;
    return scenario;
}

QString atlasProvenance(const LoadedModel& loaded, const io::Scenario& scenario,
                        const render::PageContent& figure, const QStringList& command) {
    Provenance provenance = describeExport(loaded, scenario, figure);
    provenance.command = command;
    return QString::fromUtf8(
        QJsonDocument(provenanceToJson(provenance)).toJson(QJsonDocument::Compact));
}
} // namespace headlight::app
