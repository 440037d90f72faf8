#pragma once
// One line of figure text, laid out by QTextLayout so that fallback fonts (Chinese, Japanese,
// Korean, Arabic, Devanagari), shaping and right-to-left runs come out as a reader expects;
// measured from the fonts the line actually uses (a CJK or Devanagari fallback is taller than
// DejaVu Sans, and a box sized from DejaVu alone cut its descenders); and drawn into a box
// without clipping. On an SVG device the glyphs are drawn as outlines, with an invisible <text>
// copy for search and copy-paste, so the file looks the same where the fonts are not installed
// (docs/export.md).
//
// - figureFontFamilies: DejaVu Sans, then one family per script it lacks (tools/setup.sh
//   installs them)
// - lineHeight: ascent + descent over the fonts `text` is drawn with
// - linesHeight: the tallest of several lines (at least the font's own height)
// - drawTextLine: `text` with the painter's font and pen, centred vertically in `box`
// - drawWrappedText: the same, wrapped into centred lines (an empty figure's message)
// - missingGlyphs: how many .notdef glyphs (empty boxes) `text` would show

#include <QFont>
#include <QGlyphRun>
#include <QList>
#include <QPainter>
#include <QRectF>
#include <QStringList>

namespace headlight::render {

QStringList figureFontFamilies();
double lineHeight(const QFont& font, const QString& text);
double linesHeight(const QFont& font, const QStringList& texts);
// Horizontal placement follows `alignment` (left, right or centre); text wider than `box` is
// elided at its end.
void drawTextLine(QPainter& painter, const QRectF& box, Qt::Alignment alignment,
                  const QString& text);
// `text` wrapped at word boundaries (anywhere in a word wider than `box`) into lines as wide as
// `box`, each centred, the block centred vertically in `box`, laid out and drawn like one line
// (fallback fonts, right to left, outlines in SVG). Returns the height the lines take.
double drawWrappedText(QPainter& painter, const QRectF& box, const QString& text);
QList<QGlyphRun> glyphRunsOf(const QFont& font, const QString& text);
int missingGlyphs(const QFont& font, const QString& text);
} // namespace headlight::render
