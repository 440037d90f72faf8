#pragma once
// A figure made of several smaller ones side by side, under one title and a caption line: the
// sparsity view (nominal mask | effective attention, density | mass outside the mask), the
// position-encoding view (table | similarity), the early-exit and LSH views. Each panel is
// painted by its own paint function inside its cell of the grid.

#include "figures/bar_chart.h"
#include "figures/category_grid.h"
#include "figures/heatmap.h"
#include "figures/line_chart.h"
#include "figures/scatter.h"
#include "figures/table.h"

#include <QPainter>
#include <QRectF>
#include <variant>
#include <vector>

namespace headlight::render {

struct NotePanel {
    QString message; // a panel that explains why it has no data
};

using Panel = std::variant<NotePanel, HeatmapFigure, BarChartFigure, CategoryGridFigure,
                           ScatterFigure, ScatterGridFigure, TableFigure, LineChartFigure>;

struct PanelsFigure {
    QString title;
    QString caption; // one line under the title: what is shown and the headline number
    int columns = 2;
    std::vector<Panel> panels; // row-major in a grid of `columns`
};

// A figure with nothing to draw: its title over one note saying why.
inline PanelsFigure noteFigure(const QString& title, const QString& message) {
    return {title, {}, 1, {NotePanel{message}}};
}

struct PanelsLayout {
    QRectF title, caption;
    std::vector<QRectF> cells; // one per panel
    QFont titleFont, captionFont;
};

PanelsLayout layoutPanels(const QRectF& bounds, const PanelsFigure& figure);

void paintPanel(QPainter& painter, const QRectF& bounds, const Panel& panel);
void paintPanels(QPainter& painter, const QRectF& bounds, const PanelsFigure& figure);
} // namespace headlight::render
