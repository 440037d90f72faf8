#pragma once
// Scatter plots of queries and keys in one plane (the query-key embedding view): a query is a
// filled circle, a key a triangle, each coloured by a value on a colour bar (its position) or by
// a category (its token kind) with a legend. Both axes share one scale, so that distances on the
// page are distances in the data. A scatter grid draws many small ones (one per head) with no
// axes, for an overview; a click on a cell picks it.

#include "figures/figure_style.h"

#include <QPainter>
#include <QRectF>
#include <QStringList>
#include <optional>
#include <utility>
#include <vector>

namespace headlight::render {

struct ScatterPoint {
    double x = 0.0, y = 0.0;
    bool key = false;   // a key (triangle) or a query (circle)
    int token = 0;      // its position in the text: labels[token]
    double value = 0.0; // its colour on the colour bar
    int category = -1;  // its category (categories[category]), -1 for none
};

struct ScatterFigure {
    QString title;
    QString xAxis, yAxis;
    std::vector<ScatterPoint> points;
    QStringList labels;       // [T] the tokens, for hover read-outs
    ColorBar colorBar;        // colours the points unless byCategory
    QStringList categories;   // the categories' names
    bool byCategory = false;  // colour by category (render/figures/category_grid.h's palette)
    int emphasisedToken = -1; // this token's query and key are ringed
};

struct ScatterLayout {
    QRectF title, plot, legend, xAxisTitle, yAxisTitle;
    double xLow = 0.0, xHigh = 1.0, yLow = 0.0, yHigh = 1.0; // the plot's data range
    QFont titleFont, labelFont, tickFont;
};

ScatterLayout layoutScatter(const QRectF& bounds, const ScatterFigure& figure);
QPointF scatterPosition(const ScatterLayout& layout, double x, double y); // data → page
// The index of the point drawn nearest `at`, if one is within a marker's reach.
std::optional<std::size_t> scatterPointAt(const ScatterLayout& layout, const ScatterFigure& figure,
                                          QPointF at);
QColor scatterColor(const ScatterFigure& figure, const ScatterPoint& point);
void paintScatter(QPainter& painter, const QRectF& bounds, const ScatterFigure& figure);

// Small scatters in rows × cols (e.g. layers × heads), each its own data range, no axes.
struct ScatterGridFigure {
    QString title;
    int rows = 0, cols = 0;
    QStringList rowLabels, colLabels;
    std::vector<ScatterFigure> cells; // [rows · cols]; a cell's title is printed in its corner
    ColorBar colorBar;                // as the cells', for the legend
    QStringList categories;           // the legend's, when the cells colour by category
    std::vector<std::pair<int, int>> cellHeads; // [rows · cols] the (layer, head) a cell draws
    int selected = -1;                          // the cell outlined, -1 for none
};

struct ScatterGridLayout {
    QRectF title, grid, legend;
    std::vector<QRectF> cells;
    double rowLabelWidth = 0.0;
    QFont titleFont, labelFont, tickFont;
};

ScatterGridLayout layoutScatterGrid(const QRectF& bounds, const ScatterGridFigure& figure);
std::optional<int> scatterGridCellAt(const ScatterGridLayout& layout, QPointF at);
void paintScatterGrid(QPainter& painter, const QRectF& bounds, const ScatterGridFigure& figure);
} // namespace headlight::render
