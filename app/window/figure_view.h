#pragma once
// A widget that shows one figure by calling the same paint function the export uses, and turns
// the mouse into figure terms: the heatmap cell under the pointer (read out as query token, key
// token and weight), a click on a heatmap row (select that query) or on a model-grid cell (focus
// that head). It shows either one figure or a panels figure (several figures side by side, whose
// heatmap panels read out the same way; a scatter point reads out its token, also as a tooltip,
// and a click on it selects that token as the query; a click on a scatter-grid cell focuses the
// head it draws).

#include "figures/figure.h"
#include "figures/panels.h"

#include <QWidget>
#include <optional>

namespace headlight::app {

class FigureView : public QWidget {
    Q_OBJECT
public:
    explicit FigureView(QWidget* parent = nullptr);

    void setFigure(render::Figure figure);
    // A panel view; figure() then says that the view is drawn in the window only.
    void setPanels(render::PanelsFigure panels, render::Figure standIn);
    const render::Figure& figure() const { return figure_; }
    const render::PanelsFigure* panels() const { return panels_ ? &*panels_ : nullptr; }
    QString readout() const { return readout_; } // the current hover read-out, "" when none

Q_SIGNALS:
    void readoutChanged(const QString& text);
    void heatmapRowClicked(int row);
    void panelRowClicked(int panel, int row); // a row of a panels figure's heatmap panel
    void tokenClicked(int token);             // a scatter point's token
    void headClicked(int layer, int head);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

private:
    void setReadout(const QString& text);
    void updateHover(QPointF point);
    void updatePanelHover(QPointF point);
    void pressPanel(QPointF point);

    render::Figure figure_;
    std::optional<render::PanelsFigure> panels_;
    std::optional<std::pair<int, int>> hovered_; // heatmap (row, col) under the pointer
    QString readout_;
};

// "Query 'cat' (#3) → key 'the' (#1): 0.412" for a heatmap cell.
QString heatmapReadout(const render::HeatmapFigure& figure, int row, int col);
} // namespace headlight::app
