#include "figures/token_lines.h"

#include <algorithm>
#include <utility>

namespace headlight::render {
namespace {

constexpr double kPad = 12.0;

struct Line {
    int query = 0;
    int key = 0;
    double strength = 0.0; // weight as a fraction of the colour scale, in [0, 1]
};

// Lines worth drawing, weakest first so that strong lines end up on top, and the emphasised
// query's lines after all the faded ones.
std::vector<Line> visibleLines(const TokenLinesFigure& figure) {
    const int t = int(figure.tokens.size());
    std::vector<Line> lines;
    for (int q = 0; q < t; ++q)
        for (int k = 0; k < t; ++k) {
            const double w = figure.weights[std::size_t(q) * std::size_t(t) + std::size_t(k)];
            const double s =
                std::clamp(normalise(w, figure.colorBar.low, figure.colorBar.high), 0.0, 1.0);
            if (s >= figure.minShown) lines.push_back({q, k, s});
        }
    const auto rank = [&](const Line& line) {
        return std::make_pair(line.query == figure.emphasisedQuery, line.strength);
    };
    std::stable_sort(lines.begin(), lines.end(),
                     [&](const Line& a, const Line& b) { return rank(a) < rank(b); });
    return lines;
}

void paintLine(QPainter& painter, const TokenLinesLayout& layout, const TokenLinesFigure& figure,
               const Line& line) {
    const double maxWidth = std::clamp(0.6 * layout.slot, 2.0, 10.0);
    const bool faded = figure.emphasisedQuery >= 0 && line.query != figure.emphasisedQuery;
    QColor color = colorAt(figure.colorBar.map, line.strength);
    color.setAlphaF(float((0.25 + 0.75 * line.strength) * (faded ? 0.12 : 1.0)));
    painter.setPen(QPen(color, 0.75 + line.strength * maxWidth, Qt::SolidLine, Qt::RoundCap));
    painter.drawLine(queryAnchor(layout, line.query), keyAnchor(layout, line.key));
}

void paintSide(QPainter& painter, const TokenLinesLayout& layout, const TokenLinesFigure& figure,
               bool querySide) {
    const double h = linesHeight(layout.labelFont, figure.tokens);
    const int step = labelStep(layout.slot, h);
    for (int i = 0; i < figure.tokens.size(); ++i) {
        const bool emphasised = querySide && i == figure.emphasisedQuery;
        if (i % step != 0 && !emphasised) continue;
        QFont font = layout.labelFont;
        font.setBold(emphasised);
        painter.setFont(font);
        painter.setPen(emphasised ? style::kAccent : style::kInk);
        const QPointF anchor = querySide ? queryAnchor(layout, i) : keyAnchor(layout, i);
        const double x =
            querySide ? anchor.x() - kLabelGap - layout.labelWidth : anchor.x() + kLabelGap;
        drawTextLine(painter, QRectF(x, anchor.y() - h / 2, layout.labelWidth, h), Qt::AlignRight,
                     figure.tokens[i]);
    }
}

void paintColumnTitles(QPainter& painter, const TokenLinesLayout& layout) {
    const double h = fontHeight(layout.labelFont);
    const QRectF band(layout.lines.left() - layout.labelWidth, layout.title.bottom(),
                      layout.lines.width() + 2 * layout.labelWidth, h);
    painter.setFont(layout.labelFont);
    painter.setPen(style::kMutedInk);
    drawTextLine(painter, band, Qt::AlignLeft, QStringLiteral("Query tokens"));
    drawTextLine(painter, band, Qt::AlignRight, QStringLiteral("Key tokens"));
}
} // namespace

TokenLinesLayout layoutTokenLines(const QRectF& bounds, const TokenLinesFigure& figure) {
    TokenLinesLayout layout;
    layout.titleFont = figureFont(bounds, TextRole::Title);
    layout.labelFont = figureFont(bounds, TextRole::Label);
    layout.tickFont = figureFont(bounds, TextRole::Tick);
    layout.title = QRectF(bounds.left() + kPad, bounds.top() + kPad / 2, bounds.width() - 2 * kPad,
                          lineHeight(layout.titleFont, figure.title) + kPad / 2);
    layout.labelWidth = std::min(widestText(layout.labelFont, figure.tokens), 0.2 * bounds.width());
    const double barWidth = colorBarWidth(layout.tickFont);
    const double top = layout.title.bottom() + fontHeight(layout.labelFont) + kPad;
    const double left = bounds.left() + kPad + layout.labelWidth + kLabelGap;
    const double right = bounds.right() - kPad - barWidth - layout.labelWidth - kLabelGap;
    const double bottom = bounds.bottom() - kPad;
    layout.lines = QRectF(QPointF(left, top), QPointF(std::max(right, left + 1.0), bottom));
    layout.slot = figure.tokens.isEmpty() ? 0.0 : layout.lines.height() / figure.tokens.size();
    layout.colorBar =
        QRectF(bounds.right() - kPad - barWidth, top, barWidth, layout.lines.height());
    return layout;
}

QPointF queryAnchor(const TokenLinesLayout& layout, int query) {
    return {layout.lines.left(), layout.lines.top() + (query + 0.5) * layout.slot};
}

QPointF keyAnchor(const TokenLinesLayout& layout, int key) {
    return {layout.lines.right(), layout.lines.top() + (key + 0.5) * layout.slot};
}

void paintTokenLines(QPainter& painter, const QRectF& bounds, const TokenLinesFigure& figure) {
    painter.save();
    painter.fillRect(bounds, style::kPage);
    const TokenLinesLayout layout = layoutTokenLines(bounds, figure);
    paintTitle(painter, layout.title, figure.title, layout.titleFont);
    const std::size_t t = std::size_t(figure.tokens.size());
    if (t > 0 && figure.weights.size() == t * t) {
        painter.setRenderHint(QPainter::Antialiasing, true);
        for (const Line& line : visibleLines(figure))
            paintLine(painter, layout, figure, line);
        paintSide(painter, layout, figure, true);
        paintSide(painter, layout, figure, false);
        paintColumnTitles(painter, layout);
        paintColorBar(painter, layout.colorBar, figure.colorBar, layout.tickFont);
    }
    painter.restore();
}
} // namespace headlight::render
