#include "figures/panels.h"

#include <algorithm>

namespace headlight::render {
namespace {

constexpr double kPad = 12.0;
constexpr double kGutter = 8.0; // between panels
} // namespace

PanelsLayout layoutPanels(const QRectF& bounds, const PanelsFigure& figure) {
    PanelsLayout layout;
    layout.titleFont = figureFont(bounds, TextRole::Title);
    layout.captionFont = figureFont(bounds, TextRole::Label);
    layout.title = QRectF(bounds.left() + kPad, bounds.top() + kPad / 2, bounds.width() - 2 * kPad,
                          lineHeight(layout.titleFont, figure.title) + kPad / 2);
    const double captionHeight =
        figure.caption.isEmpty() ? 0.0 : lineHeight(layout.captionFont, figure.caption);
    layout.caption =
        QRectF(layout.title.left(), layout.title.bottom(), layout.title.width(), captionHeight);
    const int count = int(figure.panels.size());
    const int columns = std::clamp(figure.columns, 1, std::max(count, 1));
    const int rows = (count + columns - 1) / columns;
    const QRectF area(bounds.left(), layout.caption.bottom() + kPad / 2, bounds.width(),
                      bounds.bottom() - layout.caption.bottom() - kPad / 2);
    const double w = (area.width() - (columns - 1) * kGutter) / columns;
    const double h = (area.height() - (std::max(rows, 1) - 1) * kGutter) / std::max(rows, 1);
    for (int i = 0; i < count; ++i)
        layout.cells.emplace_back(area.left() + (i % columns) * (w + kGutter),
                                  area.top() + (i / columns) * (h + kGutter), std::max(w, 1.0),
                                  std::max(h, 1.0));
    return layout;
}

void paintPanel(QPainter& painter, const QRectF& bounds, const Panel& panel) {
    struct Painter {
        QPainter& painter;
        const QRectF& bounds;
        void operator()(const NotePanel& p) const { paintMessage(painter, bounds, p.message); }
        void operator()(const HeatmapFigure& f) const { paintHeatmap(painter, bounds, f); }
        void operator()(const BarChartFigure& f) const { paintBarChart(painter, bounds, f); }
        void operator()(const CategoryGridFigure& f) const {
            paintCategoryGrid(painter, bounds, f);
        }
        void operator()(const ScatterFigure& f) const { paintScatter(painter, bounds, f); }
        void operator()(const ScatterGridFigure& f) const { paintScatterGrid(painter, bounds, f); }
        void operator()(const TableFigure& f) const { paintTable(painter, bounds, f); }
        void operator()(const LineChartFigure& f) const { paintLineChart(painter, bounds, f); }
    };
    std::visit(Painter{painter, bounds}, panel);
}

void paintPanels(QPainter& painter, const QRectF& bounds, const PanelsFigure& figure) {
    painter.save();
    painter.fillRect(bounds, style::kPage);
    const PanelsLayout layout = layoutPanels(bounds, figure);
    paintTitle(painter, layout.title, figure.title, layout.titleFont);
    painter.setFont(layout.captionFont);
    painter.setPen(style::kMutedInk);
    drawTextLine(painter, layout.caption, Qt::AlignLeft, figure.caption);
    for (std::size_t i = 0; i < figure.panels.size(); ++i)
        paintPanel(painter, layout.cells[i], figure.panels[i]);
    painter.restore();
}
} // namespace headlight::render
