#include "figures/text_line.h"

#include "figures/text_cache.h"

#include <QFontMetricsF>
#include <QPaintEngine>
#include <QPainterPath>
#include <QTextLayout>
#include <algorithm>
#include <memory>

namespace headlight::render {
namespace {

// One unwrapped line starting at x = 0 whatever its direction (AlignAbsolute), so the caller
// places it; bidi reordering and shaping happen inside QTextLayout.
std::unique_ptr<QTextLayout> layOut(const QFont& font, const QString& text) {
    auto layout = std::make_unique<QTextLayout>(text, font);
    QTextOption option(Qt::AlignLeft | Qt::AlignAbsolute);
    option.setWrapMode(QTextOption::NoWrap);
    layout->setTextOption(option);
    layout->beginLayout();
    layout->createLine();
    layout->endLayout(); // sets the unfinished line to its natural width
    return layout;
}

// How far a line reaches above and below its baseline: the ascent and descent of the fonts it
// uses, or its glyphs' ink where that goes further (marks above Arabic letters can).
struct Extent {
    double above = 0.0, below = 0.0;
};

Extent extentOf(const QTextLayout& layout) {
    const QTextLine line = layout.lineAt(0);
    Extent extent{line.ascent(), line.descent()};
    const double baseline = line.y() + line.ascent();
    for (const QGlyphRun& run : layout.glyphRuns()) {
        const QRawFont font = run.rawFont();
        const QList<quint32> glyphs = run.glyphIndexes();
        const QList<QPointF> positions = run.positions();
        for (qsizetype i = 0; i < glyphs.size(); ++i) {
            const QRectF ink = font.boundingRect(glyphs[i]).translated(positions[i]);
            if (ink.isEmpty()) continue;
            extent.above = std::max(extent.above, baseline - ink.top());
            extent.below = std::max(extent.below, ink.bottom() - baseline);
        }
    }
    return extent;
}

// A line's extent and natural width, as its layout gives them.
struct Measured {
    Extent extent;
    double width = 0.0;
};

// Kept per thread for each font (named by textCacheFont) and text (text_cache.h says why).
Measured measured(const QFont& font, const QString& fontName, const QString& text) {
    thread_local TextCache<Measured> cache;
    return cache.get(fontName, text, [&] {
        const auto layout = layOut(font, text);
        return Measured{extentOf(*layout), layout->lineAt(0).naturalTextWidth()};
    });
}

double heightOf(const Measured& line) {
    return line.extent.above + line.extent.below;
}

// Glyph outlines in the layout's coordinates (baseline at the line's ascent).
// Why sorted: QTextLayout returns a line's runs (one per font) in the order of a hash keyed by
// font-engine addresses, which changes from run to run; the SVG must come out the same each time.
QPainterPath outlines(const QTextLayout& layout) {
    QList<QGlyphRun> runs = layout.glyphRuns();
    const auto firstPosition = [](const QGlyphRun& run) {
        const QList<QPointF> positions = run.positions();
        return positions.isEmpty() ? QPointF() : positions.front();
    };
    std::sort(runs.begin(), runs.end(), [&](const QGlyphRun& a, const QGlyphRun& b) {
        const QPointF pa = firstPosition(a), pb = firstPosition(b);
        if (pa.x() != pb.x()) return pa.x() < pb.x();
        if (pa.y() != pb.y()) return pa.y() < pb.y();
        return a.glyphIndexes() < b.glyphIndexes();
    });
    QPainterPath path;
    for (const QGlyphRun& run : runs) {
        const QRawFont font = run.rawFont();
        const QList<quint32> glyphs = run.glyphIndexes();
        const QList<QPointF> positions = run.positions();
        for (qsizetype i = 0; i < glyphs.size(); ++i)
            path.addPath(font.pathForGlyph(glyphs[i]).translated(positions[i]));
    }
    return path;
}

bool isSvg(const QPainter& painter) {
    const QPaintEngine* engine = painter.paintEngine();
    return engine && engine->type() == QPaintEngine::SVG;
}

// The font a line is laid out in. Why unhinted for SVG: its glyphs become outlines, and a hinted
// font engine's outlines depended on what the process had drawn before (the window's SVG and
// `headlight reproduce`'s differed by 1/64 px), while unhinted outlines are the font's own.
QFont layoutFont(const QPainter& painter) {
    QFont font = painter.font();
    if (isSvg(painter)) font.setHintingPreference(QFont::PreferNoHinting);
    return font;
}

void drawLayout(QPainter& painter, const QTextLayout& layout, QPointF origin) {
    if (!isSvg(painter)) {
        layout.draw(&painter, origin);
        return;
    }
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    painter.fillPath(outlines(layout).translated(origin), painter.pen().color());
    QColor invisible = painter.pen().color();
    invisible.setAlpha(0);
    painter.setPen(invisible);
    layout.draw(&painter, origin);
    painter.restore();
}
} // namespace

QStringList figureFontFamilies() {
    return {QStringLiteral("DejaVu Sans"), QStringLiteral("WenQuanYi Micro Hei"),
            QStringLiteral("Noto Sans Arabic UI"), QStringLiteral("Noto Sans Devanagari UI")};
}

double lineHeight(const QFont& font, const QString& text) {
    return std::max(QFontMetricsF(font).height(),
                    heightOf(measured(font, textCacheFont(font), text)));
}

double linesHeight(const QFont& font, const QStringList& texts) {
    const QString fontName = textCacheFont(font);
    double tallest = QFontMetricsF(font).height();
    for (const QString& text : texts)
        tallest = std::max(tallest, heightOf(measured(font, fontName, text)));
    return tallest;
}

void drawTextLine(QPainter& painter, const QRectF& box, Qt::Alignment alignment,
                  const QString& text) {
    if (text.isEmpty()) return;
    const QFont font = painter.font();
    const QString fontName = textCacheFont(font);
    QString shown = text;
    Measured line = measured(font, fontName, text);
    if (line.width > box.width() + 0.5) {
        shown = QFontMetricsF(font).elidedText(text, Qt::ElideRight, std::max(box.width(), 0.0));
        line = measured(font, fontName, shown);
    }
    const auto layout = layOut(layoutFont(painter), shown);
    const double width = line.width;
    double x = box.left();
    if (alignment & Qt::AlignRight)
        x = box.right() - width;
    else if (alignment & Qt::AlignHCenter)
        x = box.center().x() - width / 2;
    const Extent extent = line.extent;
    const double baseline = box.center().y() - (extent.above + extent.below) / 2 + extent.above;
    drawLayout(painter, *layout, QPointF(x, baseline - layout->lineAt(0).ascent()));
}

double drawWrappedText(QPainter& painter, const QRectF& box, const QString& text) {
    if (text.isEmpty()) return 0.0;
    QTextLayout layout(text, layoutFont(painter));
    QTextOption option(Qt::AlignHCenter);
    option.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    layout.setTextOption(option);
    layout.beginLayout();
    double height = 0.0;
    for (QTextLine line = layout.createLine(); line.isValid(); line = layout.createLine()) {
        line.setLineWidth(std::max(box.width(), 1.0));
        line.setPosition(QPointF(0.0, height));
        height += line.height(); // ascent + descent of the fonts this line uses
    }
    layout.endLayout();
    drawLayout(painter, layout, QPointF(box.left(), box.center().y() - height / 2));
    return height;
}

QList<QGlyphRun> glyphRunsOf(const QFont& font, const QString& text) {
    return layOut(font, text)->glyphRuns();
}

int missingGlyphs(const QFont& font, const QString& text) {
    int missing = 0;
    for (const QGlyphRun& run : glyphRunsOf(font, text)) {
        const QList<quint32> glyphs = run.glyphIndexes();
        missing += int(std::count(glyphs.begin(), glyphs.end(), 0u)); // glyph 0 is .notdef
    }
    return missing;
}
} // namespace headlight::render
