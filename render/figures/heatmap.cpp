#include "figures/heatmap.h"

#include "figures/cell_paint.h"

#include <QFontMetricsF>
#include <QImage>
#include <algorithm>
#include <cmath>

namespace headlight::render {
namespace {

constexpr double kPad = 12.0;

float valueAt(const HeatmapFigure& figure, int row, int col) {
    return figure.values[std::size_t(row) * std::size_t(figure.cols) + std::size_t(col)];
}

// [rows × cols] values -> one pixel per cell, scaled up without smoothing when drawn.
QImage cellImage(const HeatmapFigure& figure) {
    QImage image(figure.cols, figure.rows, QImage::Format_RGB32);
    const ColorBar& bar = figure.colorBar;
    for (int r = 0; r < figure.rows; ++r) {
        auto* line = reinterpret_cast<QRgb*>(image.scanLine(r));
        for (int c = 0; c < figure.cols; ++c)
            line[c] =
                heatmapCellAbsent(figure, r, c)
                    ? style::kPage.rgb()
                    : colorAt(bar.map, normalise(valueAt(figure, r, c), bar.low, bar.high)).rgb();
    }
    return image;
}

// Values are printed only where a cell can hold "0.00" with room to spare; texts where it holds
// one wide character (longer ones are elided).
bool cellsHoldValues(const HeatmapLayout& layout, const HeatmapFigure& figure) {
    const double w = layout.plot.width() / std::max(figure.cols, 1);
    const double h = layout.plot.height() / std::max(figure.rows, 1);
    const QString widest =
        figure.cellText.isEmpty() ? QStringLiteral("-0.00") : QStringLiteral("M");
    return w >= textWidth(layout.tickFont, widest) + 4.0 && h >= 1.4 * fontHeight(layout.tickFont);
}

QString cellLabel(const HeatmapLayout& layout, const HeatmapFigure& figure, int r, int c, float v) {
    if (figure.cellText.isEmpty()) {
        // Why the snap: "-0.00" for a tiny negative difference reads as a sign that is not there.
        return QString::number(std::abs(v) < 0.005f ? 0.0f : v, 'f', 2);
    }
    const double width = layout.plot.width() / std::max(figure.cols, 1) - 2.0;
    const QString text = figure.cellText.value(r * figure.cols + c);
    const QString shown = QFontMetricsF(layout.tickFont).elidedText(text, Qt::ElideRight, width);
    // Why: a number cut to "+0…" or "…" reads as another number; it is printed whole or not at
    // all (the hover read-out and the CSV export give every value).
    bool number = false;
    text.toDouble(&number);
    return number && shown != text ? QString() : shown;
}

void paintCellValues(QPainter& painter, const HeatmapLayout& layout, const HeatmapFigure& figure) {
    painter.setFont(layout.tickFont);
    for (int r = 0; r < figure.rows; ++r)
        for (int c = 0; c < figure.cols; ++c) {
            if (heatmapCellAbsent(figure, r, c)) continue;
            const float v = valueAt(figure, r, c);
            const QColor fill = colorAt(figure.colorBar.map,
                                        normalise(v, figure.colorBar.low, figure.colorBar.high));
            painter.setPen(fill.lightnessF() > 0.55 ? style::kInk : QColor(Qt::white));
            drawTextLine(painter, heatmapCellRect(layout, figure, r, c), Qt::AlignHCenter,
                         cellLabel(layout, figure, r, c, v));
        }
}

void paintAbsentCells(QPainter& painter, const HeatmapLayout& layout, const HeatmapFigure& figure) {
    for (int r = 0; r < figure.rows; ++r)
        for (int c = 0; c < figure.cols; ++c)
            if (heatmapCellAbsent(figure, r, c))
                paintHatching(painter, heatmapCellRect(layout, figure, r, c));
}

void paintAbsentKey(QPainter& painter, const HeatmapLayout& layout, const HeatmapFigure& figure) {
    if (layout.absentKey.isEmpty()) return;
    const QRectF& key = layout.absentKey;
    const QRectF swatch(key.left() + kLabelGap, key.top(), key.height(), key.height());
    painter.fillRect(swatch, style::kPage);
    paintHatching(painter, swatch);
    painter.setPen(QPen(style::kInk, 1.0));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(swatch);
    painter.setFont(layout.tickFont);
    drawTextLine(painter,
                 QRectF(swatch.right() + kLabelGap, key.top(),
                        key.right() - swatch.right() - kLabelGap, key.height()),
                 Qt::AlignLeft, figure.absentLabel);
}

void paintEmphasis(QPainter& painter, const HeatmapLayout& layout, const HeatmapFigure& figure) {
    if (figure.emphasisedRow < 0 || figure.emphasisedRow >= figure.rows) return;
    const QRectF first = heatmapCellRect(layout, figure, figure.emphasisedRow, 0);
    const QRectF row(first.topLeft(), QPointF(layout.plot.right(), first.bottom()));
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(style::kAccent, 3.0));
    painter.drawRect(row.adjusted(-1.5, -1.5, 1.5, 1.5));
}

QStringList rowLabelTexts(const HeatmapFigure& figure) {
    QStringList texts;
    for (const RowLabel& label : heatmapRowLabels(figure))
        texts << label.text;
    return texts;
}

// Pooled rows: one label centred on each group's rows, thinned like single rows when crowded;
// a line between groups shows where one pooled query ends.
void paintGroupedRowLabels(QPainter& painter, const HeatmapLayout& layout,
                           const HeatmapFigure& figure) {
    const std::vector<RowLabel> labels = heatmapRowLabels(figure);
    const double rowHeight = layout.plot.height() / std::max(figure.rows, 1);
    const double h = linesHeight(layout.labelFont, rowLabelTexts(figure));
    const int step = labelStep(layout.plot.height() / double(labels.size()), h);
    for (std::size_t g = 0; g < labels.size(); ++g) {
        const RowLabel& label = labels[g];
        const double top = layout.plot.top() + label.first * rowHeight;
        if (g > 0) {
            painter.setPen(QPen(style::kPage, 1.0));
            painter.drawLine(QPointF(layout.plot.left(), top), QPointF(layout.plot.right(), top));
        }
        const bool emphasised =
            figure.emphasisedRow >= label.first && figure.emphasisedRow < label.first + label.count;
        if (int(g) % step != 0 && !emphasised) continue;
        QFont font = layout.labelFont;
        font.setBold(emphasised);
        painter.setFont(font);
        painter.setPen(emphasised ? style::kAccent : style::kInk);
        const double middle = top + label.count * rowHeight / 2;
        drawTextLine(painter,
                     QRectF(layout.plot.left() - kLabelGap - layout.rowLabelWidth, middle - h / 2,
                            layout.rowLabelWidth, h),
                     Qt::AlignRight, label.text);
    }
}

// Cells as large as fit, at most twice as wide as tall or tall as wide (so the figure fills a
// wide window without distorting rows into slivers); the column labels' band depends on the
// cell width, so the size is settled in two passes.
QRectF fitPlot(HeatmapLayout& layout, const HeatmapFigure& figure, const QRectF& bounds) {
    const double axisBand = fontHeight(layout.labelFont);
    const double left = bounds.left() + kPad + axisBand + layout.rowLabelWidth + kLabelGap;
    const double right = bounds.right() - kPad - colorBarWidth(layout.tickFont);
    const double top = layout.title.bottom() + kPad / 2;
    const double rotatedLimit = 0.22 * bounds.height();
    QRectF plot(left, top, std::max(right - left, 1.0), 1.0);
    for (int pass = 0; pass < 2; ++pass) {
        const bool rotated = columnLabelsRotate(plot, figure.colLabels, layout.labelFont);
        layout.colLabelHeight =
            columnLabelsHeight(figure.colLabels, layout.labelFont, rotated, rotatedLimit);
        const double bottom = bounds.bottom() - kPad - axisBand - layout.colLabelHeight;
        double cellW = std::max((right - left) / figure.cols, 1.0);
        double cellH = std::max((bottom - top) / figure.rows, 1.0);
        cellW = std::min(cellW, 2.0 * cellH);
        cellH = std::min(cellH, 2.0 * cellW);
        plot = QRectF(left, top, cellW * figure.cols, cellH * figure.rows);
    }
    return plot;
}
} // namespace

HeatmapLayout layoutHeatmap(const QRectF& bounds, const HeatmapFigure& figure) {
    HeatmapLayout layout;
    layout.titleFont = figureFont(bounds, TextRole::Title);
    layout.labelFont = figureFont(bounds, TextRole::Label);
    layout.tickFont = figureFont(bounds, TextRole::Tick);
    layout.title = QRectF(bounds.left() + kPad, bounds.top() + kPad / 2, bounds.width() - 2 * kPad,
                          lineHeight(layout.titleFont, figure.title) + kPad / 2);
    // Measured in bold: the emphasised row's label is drawn bold and must not be cut.
    QFont bold = layout.labelFont;
    bold.setBold(true);
    layout.rowLabelWidth = std::min(widestText(bold, rowLabelTexts(figure)), 0.22 * bounds.width());
    if (figure.rows <= 0 || figure.cols <= 0) return layout;
    layout.plot = fitPlot(layout, figure, bounds);
    const QRectF& plot = layout.plot;
    const double axisBand = fontHeight(layout.labelFont);
    layout.colorBar =
        QRectF(plot.right(), plot.top(), colorBarWidth(layout.tickFont), plot.height());
    if (!figure.absentLabel.isEmpty()) {
        // The key sits under the colour bar, in the column labels' band (which ends at the plot's
        // right edge), half a line below the bar's lowest tick label. Why not inside the bar's
        // column: at 600×400 the ACT view's three rows left the bar two thirds of the plot high.
        const double key = lineHeight(layout.tickFont, figure.absentLabel);
        layout.absentKey = QRectF(plot.right(), plot.bottom() + key, layout.colorBar.width(), key);
    }
    layout.rowAxisTitle = QRectF(plot.left() - kLabelGap - layout.rowLabelWidth - axisBand,
                                 plot.top(), axisBand, plot.height());
    layout.colAxisTitle =
        QRectF(plot.left(), plot.bottom() + layout.colLabelHeight, plot.width(), axisBand);
    return layout;
}

QRectF heatmapCellRect(const HeatmapLayout& layout, const HeatmapFigure& figure, int row, int col) {
    const double w = layout.plot.width() / std::max(figure.cols, 1);
    const double h = layout.plot.height() / std::max(figure.rows, 1);
    return QRectF(layout.plot.left() + col * w, layout.plot.top() + row * h, w, h);
}

std::vector<RowLabel> heatmapRowLabels(const HeatmapFigure& figure) {
    std::vector<RowLabel> labels;
    const auto textOf = [&](int row) {
        return row < figure.rowLabels.size() ? figure.rowLabels[row] : QString();
    };
    if (figure.rowGroups.empty()) {
        for (int row = 0; row < figure.rows; ++row)
            labels.push_back({textOf(row), row, 1});
        return labels;
    }
    int first = 0;
    for (const int count : figure.rowGroups) {
        RowLabel label{QString(), first, count};
        for (int row = first; row < first + count; ++row)
            label.text += textOf(row);
        labels.push_back(label);
        first += count;
    }
    return labels;
}

bool heatmapCellAbsent(const HeatmapFigure& figure, int row, int col) {
    const std::size_t at = std::size_t(row) * std::size_t(figure.cols) + std::size_t(col);
    return at < figure.absent.size() && figure.absent[at];
}

void paintHatching(QPainter& painter, const QRectF& area) {
    painter.save();
    painter.setClipRect(area, Qt::IntersectClip);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(QPen(style::kMutedInk, 1.0));
    const double step = 5.0;
    for (double x = area.left() - area.height(); x < area.right(); x += step)
        painter.drawLine(QPointF(x, area.bottom()), QPointF(x + area.height(), area.top()));
    painter.restore();
}

std::optional<std::pair<int, int>> heatmapCellAt(const HeatmapLayout& layout,
                                                 const HeatmapFigure& figure, QPointF point) {
    if (!layout.plot.contains(point) || figure.rows <= 0 || figure.cols <= 0) return std::nullopt;
    const int col = int((point.x() - layout.plot.left()) / layout.plot.width() * figure.cols);
    const int row = int((point.y() - layout.plot.top()) / layout.plot.height() * figure.rows);
    return std::make_pair(std::clamp(row, 0, figure.rows - 1), std::clamp(col, 0, figure.cols - 1));
}

void paintHeatmap(QPainter& painter, const QRectF& bounds, const HeatmapFigure& figure) {
    painter.save();
    painter.fillRect(bounds, style::kPage);
    const HeatmapLayout layout = layoutHeatmap(bounds, figure);
    paintTitle(painter, layout.title, figure.title, layout.titleFont);
    if (figure.rows > 0 && figure.cols > 0 &&
        figure.values.size() == std::size_t(figure.rows) * std::size_t(figure.cols)) {
        painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
        paintCells(painter, layout.plot, cellImage(figure), figure.values.size());
        paintAbsentCells(painter, layout, figure);
        if (cellsHoldValues(layout, figure)) paintCellValues(painter, layout, figure);
        if (figure.overlay) figure.overlay(painter, layout.plot);
        painter.setPen(QPen(style::kInk, 1.0));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(layout.plot);
        paintEmphasis(painter, layout, figure);
        if (figure.rowGroups.empty())
            paintRowLabels(painter, layout.plot, layout.rowLabelWidth, figure.rowLabels,
                           figure.emphasisedRow, layout.labelFont);
        else
            paintGroupedRowLabels(painter, layout, figure);
        paintColumnLabels(painter, layout.plot, layout.colLabelHeight, figure.colLabels, -1,
                          layout.labelFont);
        paintAxisTitle(painter, layout.rowAxisTitle, figure.rowAxis, layout.labelFont, true);
        paintAxisTitle(painter, layout.colAxisTitle, figure.colAxis, layout.labelFont, false);
        paintColorBar(painter, layout.colorBar, figure.colorBar, layout.tickFont);
        paintAbsentKey(painter, layout, figure);
    }
    painter.restore();
}
} // namespace headlight::render
