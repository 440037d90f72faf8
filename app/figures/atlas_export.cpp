#include "atlas_export.h"

#include "analysis/atlas_variant.h"
#include "export/embedded_metadata.h"
#include "export/figure_data.h"
#include "export_files.h"
#include "figures/mask_outline.h"

#include <QFileInfo>

namespace headlight::app {
namespace {

// One line per tile: where it starts, its pooled weight, and the mask's share of it.
render::DataTable overlayTable(const analysis::AtlasTiles& tiles,
                               const analysis::MaskOverlayTiles& masked) {
    render::DataTable table;
    table.header =
        QStringList{"query", "key", "weight", "allowed share", "mass", "mass outside mask"};
    for (int64_t r = 0; r < tiles.rows; ++r)
        for (int64_t c = 0; c < tiles.cols; ++c) {
            const auto at = std::size_t(r * tiles.cols + c);
            table.rows.push_back({QString::number(tiles.region.q0 + r * tiles.tile),
                                  QString::number(tiles.region.k0 + c * tiles.tile),
                                  QString::number(tiles.values[at], 'g', 9),
                                  QString::number(masked.allowedShare[at], 'g', 9),
                                  QString::number(masked.mass[at], 'g', 9),
                                  QString::number(masked.outsideMass[at], 'g', 9)});
        }
    return table;
}
} // namespace

std::vector<QPolygonF> atlasOutline(const analysis::AttentionAtlas& atlas,
                                    const analysis::AtlasMask& mask,
                                    const analysis::AtlasRegion& region) {
    std::vector<QPolygonF> shapes;
    for (const analysis::OutlineShape& s : analysis::maskOutline(mask, atlas.head(), region))
        shapes.push_back(QPolygonF({QPointF(s.left0, s.q0), QPointF(s.right0, s.q0),
                                    QPointF(s.right1, s.q1), QPointF(s.left1, s.q1)}));
    return shapes;
}

QString outsideMaskText(double share) {
    return QStringLiteral("mass outside the mask %1%").arg(share * 100.0, 0, 'f', 2);
}

AtlasExport atlasExport(const analysis::AttentionAtlas& atlas, const analysis::AtlasRegion& region,
                        analysis::TilePooling pooling, const QStringList& labels, int layer,
                        bool overlay, render::Colormap map) {
    AtlasExport out;
    out.tiles = atlasPageTiles(atlas, region, pooling);
    QString subject = atlasSubject(layer, atlas.head());
    if (const auto& rule = atlas.input().variant)
        subject += QStringLiteral(" (%1)").arg(QString::fromStdString(rule->name));
    out.figure = atlasFigure(out.tiles, labels, subject, pooling, map);
    if (!overlay) return out;
    const analysis::AtlasMask mask = analysis::atlasMaskOf(atlas.input());
    const analysis::AtlasRegion& r = out.tiles.region;
    out.masked = analysis::maskOverlayTiles(atlas, mask, r, out.tiles.tile);
    const QRectF extent(double(r.k0), double(r.q0), double(out.tiles.cols * out.tiles.tile),
                        double(out.tiles.rows * out.tiles.tile));
    out.figure.overlay = [shapes = atlasOutline(atlas, mask, r), extent](QPainter& painter,
                                                                         const QRectF& cells) {
        render::paintMaskOutline(painter, shapes, extent, cells);
    };
    return out;
}

void writeAtlasExport(const QString& out, const AtlasExport& atlas, render::ExportOptions options,
                      const QStringList& command) {
    const render::PageContent figure = atlas.figure;
    if (!atlas.masked) {
        exportToFile(out, figure, options);
        return;
    }
    options.caption.variant +=
        QStringLiteral(" · %1").arg(outsideMaskText(atlas.masked->outsideShare()));
    if (QFileInfo(out).suffix().toLower() != QLatin1String("csv")) {
        exportToFile(out, figure, options);
        return;
    }
    render::writeCsv(
        out, overlayTable(atlas.tiles, *atlas.masked),
        render::csvComments(options.provenance, {QStringLiteral("%1 of the attention lies outside "
                                                                "the mask; regenerate with: %2")
                                                     .arg(atlas.masked->outsideShare(), 0, 'g', 9)
                                                     .arg(command.join(' '))}));
}
} // namespace headlight::app
