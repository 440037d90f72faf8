#pragma once
// A figure written to a file through the same paint function as the screen: PNG at a chosen DPI,
// SVG (QSvgGenerator) and PDF (QPdfWriter) as real vector graphics (text stays text, small
// matrices are rectangles; see figures/cell_paint.h), each with a caption line under the figure
// that names the model, the variant and the text, so a figure found in a folder says where it
// came from.
//
//   imageFormatFor   a path's extension -> PNG, SVG or PDF (nothing for any other)
//   captionLine      "Model: bert · Variant: vanilla · Text: “…”"
//   paintExportPage  figure and caption into one rect (what every format draws)
//   exportFigure     the page into a file, atomically (export/atomic_write.h)
//   pngBytes         the PNG file's bytes, for an animation's frames
//
// Geometry: the page is laid out in units of 1/96 inch, the screen's logical pixel, so a figure
// exported at the size it has on screen looks like it does there; PNG scales that by DPI / 96.

#include "figures/figure.h"
#include "figures/panels.h"

#include <QByteArray>
#include <QSizeF>
#include <QString>
#include <optional>

namespace headlight::render {

// What a page shows: one figure, or several side by side (the panel views).
using PageContent = std::variant<Figure, PanelsFigure>;

enum class ImageFormat { Png, Svg, Pdf };
std::optional<ImageFormat> imageFormatFor(const QString& path); // by extension, any case

struct FigureCaption {
    QString model;   // e.g. the checkpoint folder's name
    QString variant; // e.g. "vanilla" or a variant spec's name
    QString text;    // the input text, or a corpus' description
};
QString captionLine(const FigureCaption& caption); // empty when every field is

struct ExportOptions {
    QSizeF inches{8.0, 5.5}; // page size
    int dpi = 200;           // PNG only
    FigureCaption caption;
    QString provenance; // a JSON object for the file's metadata (export/embedded_metadata.h)
};
constexpr double kLayoutDpi = 96.0; // page units per inch
constexpr int kMinDpi = 10, kMaxDpi = 2400;
constexpr double kMaxPngPixels = 200e6; // about 800 MB of RGB32 in memory

void paintExportPage(QPainter& painter, const QRectF& page, const PageContent& content,
                     const QString& caption);
// Where paintExportPage puts the caption line: as tall as the fonts its text is drawn with.
QRectF captionRect(const QRectF& page, const QString& caption);

// Throws ExportError (one line) for a bad size or DPI, a PNG too large to hold in memory, or a
// file that cannot be written; nothing is left at `path` then, and a file there stays as it was.
void exportFigure(const QString& path, ImageFormat format, const PageContent& content,
                  const ExportOptions& options);
// The PNG file exportFigure would write to `path`, as bytes (the frames of an animation,
// export/animated_png.h). Throws ExportError as exportFigure does; writes nothing.
QByteArray pngBytes(const QString& path, const PageContent& content, const ExportOptions& options);
} // namespace headlight::render
