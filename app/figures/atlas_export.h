#pragma once
// One region of the attention atlas as `headlight export --view atlas --region` writes it, shared
// by the CLI (app/cli/cli_atlas.cpp) and the window's Atlas tab so that both write the same file:
// the figure (atlas_figure.h; its subject names the variant whose kernel the atlas draws), and
// with the mask overlay (core/analysis/atlas_mask_overlay.h) the mask's outline painted over the
// cells (render/figures/mask_outline.h), the share of the region's attention outside the mask in
// the caption, and in a .csv one line per tile instead of the map's table.

#include "analysis/atlas_mask_overlay.h"
#include "atlas_figure.h"

#include <QPolygonF>
#include <optional>
#include <vector>

namespace headlight::app {

struct AtlasExport {
    analysis::AtlasTiles tiles;
    render::HeatmapFigure figure;
    std::optional<analysis::MaskOverlayTiles> masked; // with the overlay
};

// The outline of the atlas's mask over `region` as polygons in token coordinates (x a key, y a
// query), as render::paintMaskOutline reads them.
std::vector<QPolygonF> atlasOutline(const analysis::AttentionAtlas& atlas,
                                    const analysis::AtlasMask& mask,
                                    const analysis::AtlasRegion& region);

// "mass outside the mask 3.25%": the caption's and the window's words for a share in [0, 1].
QString outsideMaskText(double share);

// The figure of `region` (at most kAtlasCellsPerSide tiles a side) and, with `overlay`, the mask
// overlay over it.
AtlasExport atlasExport(const analysis::AttentionAtlas& atlas, const analysis::AtlasRegion& region,
                        analysis::TilePooling pooling, const QStringList& labels, int layer,
                        bool overlay, render::Colormap map = render::Colormap::Viridis);

// Writes `atlas` to `out` (a figure format or .csv) with `options`; the overlay's share is added
// to the caption's variant, and `command` (the export command) is named in an overlay CSV's
// comments. Throws std::exception with a one-line reason.
void writeAtlasExport(const QString& out, const AtlasExport& atlas, render::ExportOptions options,
                      const QStringList& command);
} // namespace headlight::app
