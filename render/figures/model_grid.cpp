#include "figures/model_grid.h"

#include "figures/cell_paint.h"

#include <QImage>
#include <algorithm>

namespace headlight::render {
namespace {

constexpr double kPad = 12.0;

bool consistent(const ModelGridFigure& f) {
    return f.layers > 0 && f.heads > 0 && f.tokens > 0 &&
           f.attention.size() == std::size_t(f.layers) * std::size_t(f.heads) *
                                     std::size_t(f.tokens) * std::size_t(f.tokens);
}

// One head's [T, T] map as a T × T image.
QImage headImage(const ModelGridFigure& figure, int layer, int head) {
    const std::size_t t = std::size_t(figure.tokens);
    const float* block =
        figure.attention.data() +
        (std::size_t(layer) * std::size_t(figure.heads) + std::size_t(head)) * t * t;
    QImage image(figure.tokens, figure.tokens, QImage::Format_RGB32);
    for (std::size_t r = 0; r < t; ++r) {
        auto* line = reinterpret_cast<QRgb*>(image.scanLine(int(r)));
        for (std::size_t c = 0; c < t; ++c)
            line[c] = colorAt(figure.colorBar.map, normalise(block[r * t + c], figure.colorBar.low,
                                                             figure.colorBar.high))
                          .rgb();
    }
    return image;
}

void paintGridLabels(QPainter& painter, const ModelGridLayout& layout,
                     const ModelGridFigure& figure) {
    painter.setFont(layout.tickFont);
    const double h = fontHeight(layout.tickFont);
    const int layerStep = labelStep(layout.cell, h);
    const int headStep = labelStep(layout.cell, textWidth(layout.tickFont, QStringLiteral("H00")));
    for (int l = 0; l < figure.layers; ++l) {
        if (l % layerStep != 0 && l != figure.selectedLayer) continue;
        painter.setPen(l == figure.selectedLayer ? style::kAccent : style::kInk);
        const QRectF cell = modelGridCellRect(layout, l, 0);
        drawTextLine(painter,
                     QRectF(layout.grid.left() - 60.0 - kLabelGap, cell.top(), 60.0, cell.height()),
                     Qt::AlignRight, QStringLiteral("L%1").arg(l));
    }
    for (int hd = 0; hd < figure.heads; ++hd) {
        if (hd % headStep != 0 && hd != figure.selectedHead) continue;
        painter.setPen(hd == figure.selectedHead ? style::kAccent : style::kInk);
        const QRectF cell = modelGridCellRect(layout, 0, hd);
        drawTextLine(
            painter,
            QRectF(cell.left() - 20.0, layout.grid.top() - h - 2.0, cell.width() + 40.0, h),
            Qt::AlignHCenter, QStringLiteral("H%1").arg(hd));
    }
}
} // namespace

ModelGridLayout layoutModelGrid(const QRectF& bounds, const ModelGridFigure& figure) {
    ModelGridLayout layout;
    layout.titleFont = figureFont(bounds, TextRole::Title);
    layout.labelFont = figureFont(bounds, TextRole::Label);
    layout.tickFont = figureFont(bounds, TextRole::Tick);
    layout.title = QRectF(bounds.left() + kPad, bounds.top() + kPad / 2, bounds.width() - 2 * kPad,
                          lineHeight(layout.titleFont, figure.title) + kPad / 2);
    if (figure.layers <= 0 || figure.heads <= 0) return layout;
    const double axisBand = fontHeight(layout.labelFont);
    const double tickBand = fontHeight(layout.tickFont) + kLabelGap;
    const double left = bounds.left() + kPad + axisBand +
                        textWidth(layout.tickFont, QStringLiteral("L000")) + kLabelGap;
    const double top = layout.title.bottom() + axisBand + tickBand;
    const double right = bounds.right() - kPad - colorBarWidth(layout.tickFont);
    const double bottom = bounds.bottom() - kPad;
    layout.cell =
        std::max(std::min((right - left) / figure.heads, (bottom - top) / figure.layers), 2.0);
    layout.gap = std::max(2.0, 0.08 * layout.cell);
    layout.grid = QRectF(left, top, layout.cell * figure.heads, layout.cell * figure.layers);
    layout.colorBar =
        QRectF(layout.grid.right(), top, colorBarWidth(layout.tickFont), layout.grid.height());
    layout.layerAxisTitle = QRectF(bounds.left() + kPad, top, axisBand, layout.grid.height());
    layout.headAxisTitle = QRectF(left, layout.title.bottom(), layout.grid.width(), axisBand);
    return layout;
}

QRectF modelGridCellRect(const ModelGridLayout& layout, int layer, int head) {
    const double half = layout.gap / 2;
    return QRectF(layout.grid.left() + head * layout.cell + half,
                  layout.grid.top() + layer * layout.cell + half, layout.cell - layout.gap,
                  layout.cell - layout.gap);
}

std::optional<std::pair<int, int>> modelGridCellAt(const ModelGridLayout& layout,
                                                   const ModelGridFigure& figure, QPointF point) {
    if (!layout.grid.contains(point) || layout.cell <= 0.0) return std::nullopt;
    const int head =
        std::clamp(int((point.x() - layout.grid.left()) / layout.cell), 0, figure.heads - 1);
    const int layer =
        std::clamp(int((point.y() - layout.grid.top()) / layout.cell), 0, figure.layers - 1);
    return std::make_pair(layer, head);
}

void paintModelGrid(QPainter& painter, const QRectF& bounds, const ModelGridFigure& figure) {
    painter.save();
    painter.fillRect(bounds, style::kPage);
    const ModelGridLayout layout = layoutModelGrid(bounds, figure);
    paintTitle(painter, layout.title, figure.title, layout.titleFont);
    if (consistent(figure)) {
        painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
        for (int l = 0; l < figure.layers; ++l)
            for (int h = 0; h < figure.heads; ++h)
                paintCells(painter, modelGridCellRect(layout, l, h), headImage(figure, l, h),
                           figure.attention.size());
        if (figure.selectedLayer >= 0 && figure.selectedHead >= 0) {
            painter.setBrush(Qt::NoBrush);
            painter.setPen(QPen(style::kAccent, 3.0));
            const double out = std::min(layout.gap / 2, 3.0);
            painter.drawRect(modelGridCellRect(layout, figure.selectedLayer, figure.selectedHead)
                                 .adjusted(-out, -out, out, out));
        }
        paintGridLabels(painter, layout, figure);
        paintAxisTitle(painter, layout.layerAxisTitle, QStringLiteral("Layer"), layout.labelFont,
                       true);
        paintAxisTitle(painter, layout.headAxisTitle, QStringLiteral("Head"), layout.labelFont,
                       false);
        paintColorBar(painter, layout.colorBar, figure.colorBar, layout.tickFont);
    }
    painter.restore();
}
} // namespace headlight::render
