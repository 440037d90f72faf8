#pragma once
// The model grid: every head of every layer as a small attention map (small multiples), layers
// as rows and heads as columns, on one shared colour scale, with the selected head outlined.

#include "figures/figure_style.h"

#include <QPainter>
#include <QRectF>
#include <optional>
#include <vector>

namespace headlight::render {

struct ModelGridFigure {
    QString title;
    int layers = 0;
    int heads = 0;
    int tokens = 0;
    std::vector<float> attention; // [layers · heads · tokens · tokens], query rows × key columns
    ColorBar colorBar;
    int selectedLayer = -1;
    int selectedHead = -1;
};

struct ModelGridLayout {
    QRectF title, grid, colorBar, layerAxisTitle, headAxisTitle;
    double cell = 0.0; // pitch of one small map, gap included
    double gap = 0.0;
    QFont titleFont, labelFont, tickFont;
};

ModelGridLayout layoutModelGrid(const QRectF& bounds, const ModelGridFigure& figure);
QRectF modelGridCellRect(const ModelGridLayout& layout, int layer, int head);
// The (layer, head) whose small map is under `point`, if any.
std::optional<std::pair<int, int>> modelGridCellAt(const ModelGridLayout& layout,
                                                   const ModelGridFigure& figure, QPointF point);

void paintModelGrid(QPainter& painter, const QRectF& bounds, const ModelGridFigure& figure);
} // namespace headlight::render
