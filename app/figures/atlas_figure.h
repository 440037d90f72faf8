#pragma once
// The attention atlas's figure (core/analysis/attention_atlas.h), shared by `headlight export
// --view atlas` (app/cli/cli_atlas.cpp) and the window's Atlas view and its export, so that both
// draw a region the same way: the title, the labels (tokens at one token a tile, else each
// tile's first position), the colour bar and its clipping rule, the caption and the provenance.

#include "analysis/attention_atlas.h"
#include "export/figure_export.h"
#include "figures/heatmap.h"
#include "io/scenario.h"
#include "model_session.h"

#include <QString>
#include <QStringList>

namespace headlight::app {

constexpr int64_t kAtlasCellsPerSide = 256; // what a page shows legibly

// The colour scale of a set of tiles. Why clip pooled tiles at the 99th percentile: a few tiles
// (the first tokens, the diagonal) hold most of the mass, and a scale up to them leaves the rest
// of a long map one colour. Exact weights (tile 1) are never clipped.
render::ColorBar atlasColorBar(const std::vector<float>& values, int64_t tile,
                               render::Colormap map = render::Colormap::Viridis);

// "Layer 1, head 2" or "Layer 1, mean of heads" (head AttentionAtlas::kAllHeads).
QString atlasSubject(int layer, int head);

render::HeatmapFigure atlasFigure(const analysis::AtlasTiles& tiles, const QStringList& tokens,
                                  const QString& subject, analysis::TilePooling pooling,
                                  render::Colormap map = render::Colormap::Viridis);

// The regions and tiles `export --view atlas --region` draws: at most kAtlasCellsPerSide a side.
analysis::AtlasTiles atlasPageTiles(const analysis::AttentionAtlas& atlas,
                                    const analysis::AtlasRegion& region,
                                    analysis::TilePooling pooling);

// The caption line's model, variant and text (the text's first 40 characters and its length).
render::FigureCaption atlasCaption(const LoadedModel& loaded, const QString& text, int64_t tokens);

// The scenario an atlas export records: model, text, view "atlas", layer and head or mean.
io::Scenario atlasScenario(const LoadedModel& loaded, const QString& text, int layer, int head);

// The provenance JSON (provenance.h) of an atlas figure, with the command that redraws it.
QString atlasProvenance(const LoadedModel& loaded, const io::Scenario& scenario,
                        const render::PageContent& figure, const QStringList& command);
} // namespace headlight::app
