#include "figure_view.h"

#include "query_key_figures.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

namespace headlight::app {

FigureView::FigureView(QWidget* parent)
    : QWidget(parent) {
    setMouseTracking(true);
    setMinimumSize(320, 240);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void FigureView::setFigure(render::Figure figure) {
    figure_ = std::move(figure);
    panels_.reset();
    hovered_.reset();
    setReadout({});
    update();
}

void FigureView::setPanels(render::PanelsFigure panels, render::Figure standIn) {
    figure_ = std::move(standIn);
    panels_ = std::move(panels);
    hovered_.reset();
    setReadout({});
    update();
}

void FigureView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    if (panels_) {
        render::paintPanels(painter, rect(), *panels_);
        return;
    }
    render::paintFigure(painter, rect(), figure_);
    const auto* heatmap = std::get_if<render::HeatmapFigure>(&figure_);
    if (!heatmap || !hovered_) return;
    const render::HeatmapLayout layout = render::layoutHeatmap(rect(), *heatmap);
    const QRectF cell =
        render::heatmapCellRect(layout, *heatmap, hovered_->first, hovered_->second);
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(Qt::white, 3.0));
    painter.drawRect(cell);
    painter.setPen(QPen(render::style::kInk, 1.0));
    painter.drawRect(cell.adjusted(-2, -2, 2, 2));
}

void FigureView::mouseMoveEvent(QMouseEvent* event) {
    updateHover(event->position());
}

void FigureView::leaveEvent(QEvent*) {
    hovered_.reset();
    setReadout({});
    update();
}

void FigureView::updatePanelHover(QPointF point) {
    const render::PanelsLayout layout = render::layoutPanels(rect(), *panels_);
    for (std::size_t i = 0; i < layout.cells.size(); ++i) {
        if (!layout.cells[i].contains(point)) continue;
        if (const auto* scatter = std::get_if<render::ScatterFigure>(&panels_->panels[i])) {
            const auto hit = render::scatterPointAt(
                render::layoutScatter(layout.cells[i], *scatter), *scatter, point);
            const QString text = hit ? scatterReadout(*scatter, scatter->points[*hit]) : QString();
            setReadout(text);
            if (text.isEmpty())
                QToolTip::hideText();
            else
                QToolTip::showText(mapToGlobal(point.toPoint()), text, this);
            return;
        }
        if (const auto* grid = std::get_if<render::ScatterGridFigure>(&panels_->panels[i])) {
            const auto cell =
                render::scatterGridCellAt(render::layoutScatterGrid(layout.cells[i], *grid), point);
            setReadout(cell && std::size_t(*cell) < grid->cells.size()
                           ? tr("%1: click to focus this head").arg(grid->cells[*cell].title)
                           : QString());
            return;
        }
        const auto* heatmap = std::get_if<render::HeatmapFigure>(&panels_->panels[i]);
        if (!heatmap || !layout.cells[i].contains(point)) continue;
        const auto cell = render::heatmapCellAt(render::layoutHeatmap(layout.cells[i], *heatmap),
                                                *heatmap, point);
        setReadout(cell ? heatmapReadout(*heatmap, cell->first, cell->second) : QString());
        return;
    }
    setReadout({});
}

void FigureView::updateHover(QPointF point) {
    if (panels_) {
        updatePanelHover(point);
        return;
    }
    if (const auto* heatmap = std::get_if<render::HeatmapFigure>(&figure_)) {
        const auto cell =
            render::heatmapCellAt(render::layoutHeatmap(rect(), *heatmap), *heatmap, point);
        if (cell != hovered_) update();
        hovered_ = cell;
        setReadout(cell ? heatmapReadout(*heatmap, cell->first, cell->second) : QString());
    } else if (const auto* grid = std::get_if<render::ModelGridFigure>(&figure_)) {
        const auto cell =
            render::modelGridCellAt(render::layoutModelGrid(rect(), *grid), *grid, point);
        setReadout(cell ? tr("Layer %1, head %2: click to focus this head")
                              .arg(cell->first)
                              .arg(cell->second)
                        : QString());
    }
}

// A scatter point selects its token as the query; a scatter-grid cell focuses its head; a
// heatmap panel's row is reported (the Features overview opens that feature's page).
void FigureView::pressPanel(QPointF point) {
    const render::PanelsLayout layout = render::layoutPanels(rect(), *panels_);
    for (std::size_t i = 0; i < layout.cells.size(); ++i) {
        if (!layout.cells[i].contains(point)) continue;
        if (const auto* scatter = std::get_if<render::ScatterFigure>(&panels_->panels[i])) {
            const auto hit = render::scatterPointAt(
                render::layoutScatter(layout.cells[i], *scatter), *scatter, point);
            if (hit) Q_EMIT tokenClicked(scatter->points[*hit].token);
        } else if (const auto* grid = std::get_if<render::ScatterGridFigure>(&panels_->panels[i])) {
            const auto cell =
                render::scatterGridCellAt(render::layoutScatterGrid(layout.cells[i], *grid), point);
            if (cell && std::size_t(*cell) < grid->cellHeads.size())
                Q_EMIT headClicked(grid->cellHeads[std::size_t(*cell)].first,
                                   grid->cellHeads[std::size_t(*cell)].second);
        } else if (const auto* heatmap = std::get_if<render::HeatmapFigure>(&panels_->panels[i])) {
            const auto cell = render::heatmapCellAt(
                render::layoutHeatmap(layout.cells[i], *heatmap), *heatmap, point);
            if (cell) Q_EMIT panelRowClicked(int(i), cell->first);
        }
        return;
    }
}

void FigureView::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return;
    if (panels_) {
        pressPanel(event->position());
        return;
    }
    if (const auto* heatmap = std::get_if<render::HeatmapFigure>(&figure_)) {
        const auto cell = render::heatmapCellAt(render::layoutHeatmap(rect(), *heatmap), *heatmap,
                                                event->position());
        if (cell) Q_EMIT heatmapRowClicked(cell->first);
    } else if (const auto* grid = std::get_if<render::ModelGridFigure>(&figure_)) {
        const auto cell = render::modelGridCellAt(render::layoutModelGrid(rect(), *grid), *grid,
                                                  event->position());
        if (cell) Q_EMIT headClicked(cell->first, cell->second);
    }
}

void FigureView::setReadout(const QString& text) {
    if (text == readout_) return;
    readout_ = text;
    Q_EMIT readoutChanged(text);
}

QString heatmapReadout(const render::HeatmapFigure& figure, int row, int col) {
    const float value =
        figure.values[std::size_t(row) * std::size_t(figure.cols) + std::size_t(col)];
    return QStringLiteral("%1 “%2” (#%3) → %4 “%5” (#%6): %7")
        .arg(figure.rowAxis, figure.rowLabels.value(row))
        .arg(row)
        .arg(figure.colAxis, figure.colLabels.value(col))
        .arg(col)
        .arg(QString::number(value, 'f', 3));
}
} // namespace headlight::app
