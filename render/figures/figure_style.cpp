#include "figures/figure_style.h"

#include "figures/text_cache.h"

#include <QFontMetricsF>
#include <QLinearGradient>
#include <algorithm>
#include <cmath>

namespace headlight::render {
namespace {

constexpr double kBarWidth = 18.0;
constexpr double kGap = kLabelGap;

QString tickText(double value) {
    return QString::number(value, 'g', 3);
}

// A tick: a short line to the right of the bar and its value beside it.
void paintTick(QPainter& painter, const QRectF& bar, double y, const QString& text,
               const QFont& font) {
    painter.setPen(QPen(style::kInk, 1.0));
    painter.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + 4.0, y));
    const double h = fontHeight(font);
    drawTextLine(painter, QRectF(bar.right() + kGap, y - h / 2, 200.0, h), Qt::AlignLeft, text);
}

void paintBarLabel(QPainter& painter, const QRectF& area, const QString& label, const QFont& font) {
    const QRectF labelArea(area.right() - fontHeight(font), area.top(), fontHeight(font),
                           area.height());
    paintAxisTitle(painter, labelArea, label, font, true);
}

// Kept per thread for each font (named by textCacheFont) and text (text_cache.h says why).
double advance(const QFont& font, const QString& fontName, const QString& text) {
    thread_local TextCache<double> cache;
    return cache.get(fontName, text, [&] { return QFontMetricsF(font).horizontalAdvance(text); });
}
} // namespace

QFont figureFont(const QRectF& bounds, TextRole role) {
    const double base = std::clamp(std::min(bounds.width(), bounds.height()) / 48.0, 11.0, 20.0);
    QFont font;
    font.setFamilies(figureFontFamilies());
    switch (role) {
    case TextRole::Title:
        font.setPixelSize(int(std::lround(base * 1.2)));
        font.setBold(true);
        break;
    case TextRole::Label:
        font.setPixelSize(int(std::lround(base)));
        break;
    case TextRole::Tick:
        font.setPixelSize(int(std::lround(base * 0.85)));
        break;
    }
    return font;
}

double fontHeight(const QFont& font) {
    return QFontMetricsF(font).height();
}

double textWidth(const QFont& font, const QString& text) {
    return advance(font, textCacheFont(font), text);
}

double widestText(const QFont& font, const QStringList& texts) {
    const QString fontName = textCacheFont(font);
    double widest = 0.0;
    for (const QString& text : texts)
        widest = std::max(widest, advance(font, fontName, text));
    return widest;
}

QString elided(const QString& text, const QFont& font, double width) {
    return QFontMetricsF(font).elidedText(text, Qt::ElideRight, std::max(width, 0.0));
}

void paintTitle(QPainter& painter, const QRectF& area, const QString& title, const QFont& font) {
    painter.setFont(font);
    painter.setPen(style::kInk);
    drawTextLine(painter, area, Qt::AlignLeft, title);
}

// Why room for "-0.0000": round ticks of the ranges figures use print in at most seven
// characters ("0.0025", "-0.0005"); a wider label would run into the bar's title.
double colorBarWidth(const QFont& tickFont) {
    return 2 * kGap + kBarWidth + 4.0 + textWidth(tickFont, QStringLiteral("-0.0000")) + kGap +
           fontHeight(tickFont);
}

void paintColorBar(QPainter& painter, const QRectF& area, const ColorBar& bar,
                   const QFont& tickFont) {
    const QRectF strip(area.left() + kGap, area.top(), kBarWidth, area.height());
    QLinearGradient gradient(strip.bottomLeft(), strip.topLeft());
    constexpr int kStops = 64;
    for (int i = 0; i <= kStops; ++i)
        gradient.setColorAt(double(i) / kStops, colorAt(bar.map, double(i) / kStops));
    painter.fillRect(strip, gradient);
    painter.setPen(QPen(style::kInk, 1.0));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(strip);
    painter.setFont(tickFont);
    for (const double value : roundTicks(bar.low, bar.high, 4)) {
        const double f = bar.high > bar.low ? (value - bar.low) / (bar.high - bar.low) : 0.0;
        paintTick(painter, strip, strip.bottom() - f * strip.height(), tickText(value), tickFont);
    }
    paintBarLabel(painter, area, bar.label, tickFont);
}

QColor thresholdColor(double value, const Thresholds& thresholds) {
    if (value < thresholds.low) return thresholds.colors[0];
    if (value > thresholds.high) return thresholds.colors[2];
    return thresholds.colors[1];
}

void paintThresholdBar(QPainter& painter, const QRectF& area, const Thresholds& thresholds,
                       double minValue, double maxValue, const QString& label,
                       const QFont& tickFont) {
    const QRectF strip(area.left() + kGap, area.top(), kBarWidth, area.height());
    const auto yOf = [&](double v) {
        const double f = std::clamp(normalise(v, minValue, maxValue), 0.0, 1.0);
        return strip.bottom() - f * strip.height();
    };
    const double edges[4] = {minValue, std::clamp(thresholds.low, minValue, maxValue),
                             std::clamp(thresholds.high, minValue, maxValue), maxValue};
    for (int band = 0; band < 3; ++band)
        painter.fillRect(QRectF(QPointF(strip.left(), yOf(edges[band + 1])),
                                QPointF(strip.right(), yOf(edges[band]))),
                         thresholds.colors[std::size_t(band)]);
    painter.setPen(QPen(style::kInk, 1.0));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(strip);
    painter.setFont(tickFont);
    for (double v : edges)
        paintTick(painter, strip, yOf(v), tickText(v), tickFont);
    paintBarLabel(painter, area, label, tickFont);
}

double roundTickStep(double span, int intervals) {
    if (!(span > 0.0) || intervals < 1) return 1.0;
    const double raw = span / intervals;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    for (const double m : {1.0, 2.0, 2.5, 5.0})
        if (m * power >= raw * (1.0 - 1e-9)) return m * power;
    return 10.0 * power;
}

std::vector<double> roundTicks(double low, double high, int intervals) {
    if (!(high > low)) return {low};
    const double step = roundTickStep(high - low, intervals);
    const double slack = step * 1e-9; // an end that is a multiple up to rounding counts
    std::vector<double> ticks;
    for (auto k = int64_t(std::ceil((low - slack) / step)); double(k) * step <= high + slack; ++k)
        ticks.push_back(k == 0 ? 0.0 : double(k) * step);
    return ticks;
}

int labelStep(double slot, double labelExtent) {
    if (slot <= 0.0) return 1;
    const int needed = std::max(1, int(std::ceil(labelExtent / slot)));
    // Why round steps: every 5th or 10th label reads as a regular ruler; every 3rd or 7th read as
    // labels skipped at random (and a label's index is easy to count from a round step).
    for (int power = 1;; power *= 10)
        for (const int m : {1, 2, 5})
            if (m * power >= needed) return m * power;
}

void paintRowLabels(QPainter& painter, const QRectF& plot, double labelWidth,
                    const QStringList& labels, int emphasised, const QFont& font) {
    if (labels.isEmpty()) return;
    const double slot = plot.height() / labels.size();
    const double h = linesHeight(font, labels);
    const int step = labelStep(slot, h);
    for (int i = 0; i < labels.size(); ++i) {
        if (i % step != 0 && i != emphasised) continue;
        QFont f = font;
        f.setBold(i == emphasised);
        painter.setFont(f);
        painter.setPen(i == emphasised ? style::kAccent : style::kInk);
        const double y = plot.top() + (i + 0.5) * slot;
        drawTextLine(painter, QRectF(plot.left() - kGap - labelWidth, y - h / 2, labelWidth, h),
                     Qt::AlignRight, labels[i]);
    }
}

bool columnLabelsRotate(const QRectF& plot, const QStringList& labels, const QFont& font) {
    if (labels.isEmpty()) return false;
    return widestText(font, labels) > 0.92 * plot.width() / labels.size();
}

double columnLabelsHeight(const QStringList& labels, const QFont& font, bool rotated,
                          double limit) {
    if (!rotated) return linesHeight(font, labels) + kGap;
    return std::min(widestText(font, labels), limit) + kGap;
}

void paintColumnLabels(QPainter& painter, const QRectF& plot, double labelHeight,
                       const QStringList& labels, int emphasised, const QFont& font) {
    if (labels.isEmpty()) return;
    const double slot = plot.width() / labels.size();
    const double h = linesHeight(font, labels);
    const bool rotated = columnLabelsRotate(plot, labels, font);
    const int step = rotated ? labelStep(slot, h) : 1;
    const double room = rotated ? labelHeight - kGap : slot;
    for (int i = 0; i < labels.size(); ++i) {
        if (i % step != 0 && i != emphasised) continue;
        QFont f = font;
        f.setBold(i == emphasised);
        painter.setFont(f);
        painter.setPen(i == emphasised ? style::kAccent : style::kInk);
        const double x = plot.left() + (i + 0.5) * slot;
        if (!rotated) {
            drawTextLine(painter, QRectF(x - slot / 2, plot.bottom() + kGap / 2, slot, h),
                         Qt::AlignHCenter, labels[i]);
            continue;
        }
        painter.save();
        painter.translate(x, plot.bottom() + kGap / 2);
        painter.rotate(-90.0);
        drawTextLine(painter, QRectF(-room, -h / 2, room, h), Qt::AlignRight, labels[i]);
        painter.restore();
    }
}

void paintAxisTitle(QPainter& painter, const QRectF& area, const QString& text, const QFont& font,
                    bool vertical) {
    painter.setFont(font);
    painter.setPen(style::kMutedInk);
    if (!vertical) {
        drawTextLine(painter, area, Qt::AlignHCenter, text);
        return;
    }
    painter.save();
    painter.translate(area.center());
    painter.rotate(-90.0);
    const QRectF turned(-area.height() / 2, -area.width() / 2, area.height(), area.width());
    drawTextLine(painter, turned, Qt::AlignHCenter, text);
    painter.restore();
}

void paintMessage(QPainter& painter, const QRectF& bounds, const QString& message) {
    painter.fillRect(bounds, style::kPage);
    const QFont font = figureFont(bounds, TextRole::Label);
    painter.setFont(font);
    painter.setPen(style::kMutedInk);
    drawWrappedText(painter, bounds.adjusted(24, 24, -24, -24), message);
}
} // namespace headlight::render
