#pragma once
// Violin plots of a per-token statistic per head, one panel per layer (or per pair of adjacent
// layers), heads in the order the caller gives (sorted by median), each violin coloured by where
// its median falls against two thresholds: the RealFormer figures' entropy (1.5 / 4.5 nats) and
// adjacent-layer JSD (0.25 / 0.75 bits) bands.

#include "figures/figure_style.h"

#include <QPainter>
#include <QRectF>
#include <vector>

namespace headlight::render {

struct ViolinShape {
    int head = 0;
    float q1 = 0.0f;
    float median = 0.0f;
    float q3 = 0.0f;
    std::vector<float> density; // [G] on ViolinFigure::grid; drawn scaled to its own maximum
};

struct ViolinPanel {
    QString title;                    // e.g. "Layer 3"
    int layer = 0;                    // which layer the panel shows (for the selection)
    std::vector<ViolinShape> violins; // left to right
};

struct ViolinFigure {
    QString title;
    QString valueAxis;       // e.g. "Entropy (nats)"
    std::vector<float> grid; // [G] values the densities are evaluated at, ascending
    std::vector<ViolinPanel> panels;
    Thresholds thresholds;
    double minValue = 0.0; // the value axis range
    double maxValue = 1.0;
    int selectedLayer = -1; // the violin of (selectedLayer, selectedHead) is outlined
    int selectedHead = -1;
};

// The Okabe–Ito blue, yellow and vermillion: the RealFormer figures' bands, colour-blind safe.
Thresholds realFormerColors(double low, double high);

struct ViolinLayout {
    QRectF title, colorBar;
    std::vector<QRectF> panels; // plot area of each panel (its title and head labels outside)
    int columns = 1;
    QFont titleFont, labelFont, tickFont;
};

ViolinLayout layoutViolins(const QRectF& bounds, const ViolinFigure& figure);
double violinValueY(const QRectF& plot, const ViolinFigure& figure, double value);
double violinCenterX(const QRectF& plot, const ViolinPanel& panel, int index);

void paintViolins(QPainter& painter, const QRectF& bounds, const ViolinFigure& figure);
} // namespace headlight::render
