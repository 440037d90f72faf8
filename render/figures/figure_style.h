#pragma once
// What every figure shares: the page colours, fonts sized from the figure's bounds (so a figure
// reads the same on a laptop, a projector and an exported PNG), the title, colour bars and token
// labels that rotate and thin themselves when the axis is crowded.
//
//   figureFont / fontHeight   pixel-sized fonts, so layout and hit-testing agree on any device
//   paintTitle                one line of bold text at the top of a rect
//   paintColorBar             a vertical continuous colour bar with ticks and a label
//   paintThresholdBar         a vertical three-band bar (low / middle / high) with its thresholds
//   paintRowLabels            token labels right-aligned to the left of rows, thinned if crowded
//   paintColumnLabels         token labels under columns, rotated and thinned if crowded
//   paintMessage              a centred message on an empty figure

#include "colormap.h"
#include "figures/text_line.h"

#include <QColor>
#include <QFont>
#include <QPainter>
#include <QRectF>
#include <QStringList>
#include <array>
#include <vector>

namespace headlight::render {

namespace style {
inline const QColor kPage{255, 255, 255};
inline const QColor kInk{33, 37, 41};
inline const QColor kMutedInk{108, 117, 125};
inline const QColor kGrid{222, 226, 230};
inline const QColor kAccent{213, 94, 0}; // Okabe–Ito vermillion: selection outlines
} // namespace style

// Font sizes scale with the figure so text stays legible; `role` picks a relative size.
enum class TextRole { Title, Label, Tick };
QFont figureFont(const QRectF& bounds, TextRole role);
double fontHeight(const QFont& font);
double textWidth(const QFont& font, const QString& text);
double widestText(const QFont& font, const QStringList& texts);

void paintTitle(QPainter& painter, const QRectF& area, const QString& title, const QFont& font);

struct ColorBar {
    Colormap map = Colormap::Viridis;
    double low = 0.0;
    double high = 1.0;
    QString label;
};
// The room a colour bar needs to the right of a plot (bar, ticks and rotated label).
double colorBarWidth(const QFont& tickFont);
void paintColorBar(QPainter& painter, const QRectF& area, const ColorBar& bar,
                   const QFont& tickFont);

// Three colours split at two thresholds: below `low`, from `low` to `high`, above `high`.
struct Thresholds {
    double low = 0.0;
    double high = 1.0;
    std::array<QColor, 3> colors;
};
QColor thresholdColor(double value, const Thresholds& thresholds);
// `area`'s height spans [minValue, maxValue], as the plot it sits beside.
void paintThresholdBar(QPainter& painter, const QRectF& area, const Thresholds& thresholds,
                       double minValue, double maxValue, const QString& label,
                       const QFont& tickFont);

// The round step (1, 2, 2.5 or 5 times a power of ten) that cuts `span` into about `intervals`
// intervals: ticks then read 0, 0.25, 0.5 rather than 0, 0.242, 0.483.
double roundTickStep(double span, int intervals);
// The multiples of roundTickStep(high - low, intervals) within [low, high], each computed as
// k · step (never summed, so 0.3 prints as 0.3); {low} when the range is empty.
std::vector<double> roundTicks(double low, double high, int intervals);

// Every `step`-th label is drawn so that labels never overlap: 1 when they fit, else the
// smallest of 2, 5, 10, 20, 50… that is enough.
int labelStep(double slot, double labelExtent);
// Labels sit in the `labelWidth` just left of the plot (less a small gap).
void paintRowLabels(QPainter& painter, const QRectF& plot, double labelWidth,
                    const QStringList& labels, int emphasised, const QFont& font);
// Column labels stand upright when they fit their column, else turn 90° (reading upwards).
bool columnLabelsRotate(const QRectF& plot, const QStringList& labels, const QFont& font);
double columnLabelsHeight(const QStringList& labels, const QFont& font, bool rotated, double limit);
constexpr double kLabelGap = 6.0; // between a plot and its labels
// `labelHeight` is the band under the plot, as columnLabelsHeight gave it.
void paintColumnLabels(QPainter& painter, const QRectF& plot, double labelHeight,
                       const QStringList& labels, int emphasised, const QFont& font);
void paintAxisTitle(QPainter& painter, const QRectF& area, const QString& text, const QFont& font,
                    bool vertical);

void paintMessage(QPainter& painter, const QRectF& bounds, const QString& message);
QString elided(const QString& text, const QFont& font, double width);
} // namespace headlight::render
