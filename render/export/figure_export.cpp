#include "export/figure_export.h"

#include "export/atomic_write.h"
#include "export/embedded_metadata.h"
#include "figures/figure_style.h"

#include <QBuffer>
#include <QFileInfo>
#include <QImage>
#include <QImageWriter>
#include <QPageSize>
#include <QPdfWriter>
#include <QSvgGenerator>

namespace headlight::render {
namespace {

constexpr double kCaptionPad = 8.0;
constexpr double kMaxInches = 100.0;

QString titleOf(const PageContent& content) {
    struct Title {
        QString operator()(const EmptyFigure& f) const { return f.message; }
        QString operator()(const HeatmapFigure& f) const { return f.title; }
        QString operator()(const ModelGridFigure& f) const { return f.title; }
        QString operator()(const TokenLinesFigure& f) const { return f.title; }
        QString operator()(const ViolinFigure& f) const { return f.title; }
        QString operator()(const Figure& f) const { return std::visit(*this, f); }
        QString operator()(const PanelsFigure& f) const { return f.title; }
    };
    return std::visit(Title{}, content);
}

void paintContent(QPainter& painter, const QRectF& bounds, const PageContent& content) {
    if (const auto* panels = std::get_if<PanelsFigure>(&content))
        paintPanels(painter, bounds, *panels);
    else
        paintFigure(painter, bounds, std::get<Figure>(content));
}

QRectF pageRect(const ExportOptions& options) {
    return QRectF(QPointF(0, 0), options.inches * kLayoutDpi);
}

void checkOptions(const QString& path, ImageFormat format, const ExportOptions& options) {
    const QSizeF& size = options.inches;
    if (!(size.width() > 0 && size.height() > 0 && size.width() <= kMaxInches &&
          size.height() <= kMaxInches))
        failExport(path, QStringLiteral("the page must be more than 0 and at most %1 inches a side")
                             .arg(kMaxInches));
    if (format == ImageFormat::Png && (options.dpi < kMinDpi || options.dpi > kMaxDpi))
        failExport(path, QStringLiteral("the DPI must be from %1 to %2").arg(kMinDpi).arg(kMaxDpi));
}

QImage renderPng(const QString& path, const PageContent& content, const ExportOptions& options) {
    const QSize pixels((options.inches * options.dpi).toSize());
    const QString dimensions = QStringLiteral("%1 × %2").arg(pixels.width()).arg(pixels.height());
    if (double(pixels.width()) * pixels.height() > kMaxPngPixels)
        failExport(path, QStringLiteral("a %1 pixel PNG is too large; lower the DPI or the size")
                             .arg(dimensions));
    QImage image(pixels, QImage::Format_RGB32);
    if (image.isNull())
        failExport(path, QStringLiteral("not enough memory for a %1 pixel image").arg(dimensions));
    // Why: the pHYs chunk tells LaTeX and image editors the physical size the figure was made for.
    const int dotsPerMeter = qRound(options.dpi / 0.0254);
    image.setDotsPerMeterX(dotsPerMeter);
    image.setDotsPerMeterY(dotsPerMeter);
    QPainter painter(&image);
    painter.scale(options.dpi / kLayoutDpi, options.dpi / kLayoutDpi);
    paintExportPage(painter, pageRect(options), content, captionLine(options.caption));
    return image;
}

QByteArray encodePng(const QString& path, const QImage& image, const PageContent& content,
                     const ExportOptions& options) {
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QImageWriter writer(&buffer, "png");
    writer.setText(QStringLiteral("Title"), titleOf(content));
    writer.setText(QStringLiteral("Description"), captionLine(options.caption));
    writer.setText(QStringLiteral("Software"), QStringLiteral("Headlight"));
    if (!options.provenance.isEmpty())
        writer.setText(QLatin1String(kProvenanceKey), options.provenance);
    if (!writer.write(image)) failExport(path, writer.errorString());
    return buffer.data();
}

void writePng(const QString& path, const PageContent& content, const ExportOptions& options) {
    writeBytesAtomically(path,
                         encodePng(path, renderPng(path, content, options), content, options));
}

// Paints the page onto a vector device that was set up to match `pageRect(options)`.
void paintVector(const QString& path, QPaintDevice& device, const PageContent& content,
                 const ExportOptions& options) {
    QPainter painter;
    if (!painter.begin(&device))
        failExport(path, QStringLiteral("the vector writer did not start"));
    paintExportPage(painter, pageRect(options), content, captionLine(options.caption));
    painter.end();
}

// Why through a buffer: QSvgGenerator has no <metadata>, so the provenance goes into its output.
void writeSvg(const QString& path, const PageContent& content, const ExportOptions& options) {
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    {
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        svg.setResolution(int(kLayoutDpi));
        svg.setSize(pageRect(options).size().toSize());
        svg.setViewBox(pageRect(options));
        // Why escaped: QSvgGenerator writes <title> and <desc> verbatim, so a text with "&" or "<"
        // (or a title such as "Abnar & Zuidema") would make the file invalid XML.
        svg.setTitle(titleOf(content).toHtmlEscaped());
        svg.setDescription(captionLine(options.caption).toHtmlEscaped());
        paintVector(path, svg, content, options);
    }
    const QByteArray bytes = options.provenance.isEmpty()
                                 ? buffer.data()
                                 : svgWithMetadata(buffer.data(), options.provenance);
    writeBytesAtomically(path, bytes);
}

void writePdf(const QString& path, const PageContent& content, const ExportOptions& options) {
    writeAtomically(path, [&](QIODevice& device) {
        QPdfWriter pdf(&device);
        pdf.setResolution(int(kLayoutDpi));
        // ExactMatch: a size near a standard one (say 8.5 × 11 in) must not snap to it.
        pdf.setPageSize(
            QPageSize(options.inches, QPageSize::Inch, QString(), QPageSize::ExactMatch));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        pdf.setTitle(titleOf(content));
        pdf.setCreator(QStringLiteral("Headlight"));
        if (!options.provenance.isEmpty())
            pdf.setDocumentXmpMetadata(
                xmpPacket(titleOf(content), captionLine(options.caption), options.provenance));
        paintVector(path, pdf, content, options);
    });
}
} // namespace

std::optional<ImageFormat> imageFormatFor(const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("png")) return ImageFormat::Png;
    if (suffix == QLatin1String("svg")) return ImageFormat::Svg;
    if (suffix == QLatin1String("pdf")) return ImageFormat::Pdf;
    return std::nullopt;
}

QString captionLine(const FigureCaption& caption) {
    QStringList parts;
    if (!caption.model.isEmpty()) parts << QStringLiteral("Model: %1").arg(caption.model);
    if (!caption.variant.isEmpty()) parts << QStringLiteral("Variant: %1").arg(caption.variant);
    if (!caption.text.isEmpty())
        parts << QStringLiteral("Text: “%1”").arg(caption.text.simplified());
    return parts.join(QStringLiteral("  ·  "));
}

QRectF captionRect(const QRectF& page, const QString& caption) {
    if (caption.isEmpty()) return QRectF(page.left(), page.bottom(), page.width(), 0.0);
    const double height = lineHeight(figureFont(page, TextRole::Tick), caption);
    return QRectF(page.left() + 12.0, page.bottom() - kCaptionPad / 2 - height, page.width() - 24.0,
                  height);
}

void paintExportPage(QPainter& painter, const QRectF& page, const PageContent& content,
                     const QString& caption) {
    painter.save();
    painter.fillRect(page, style::kPage);
    QRectF body = page;
    if (!caption.isEmpty()) {
        const QRectF line = captionRect(page, caption);
        body.setBottom(line.top() - kCaptionPad / 2);
        painter.setFont(figureFont(page, TextRole::Tick));
        painter.setPen(style::kMutedInk);
        drawTextLine(painter, line, Qt::AlignLeft, caption);
    }
    paintContent(painter, body, content);
    painter.restore();
}

QByteArray pngBytes(const QString& path, const PageContent& content, const ExportOptions& options) {
    checkOptions(path, ImageFormat::Png, options);
    return encodePng(path, renderPng(path, content, options), content, options);
}

void exportFigure(const QString& path, ImageFormat format, const PageContent& content,
                  const ExportOptions& options) {
    checkOptions(path, format, options);
    switch (format) {
    case ImageFormat::Png:
        return writePng(path, content, options);
    case ImageFormat::Svg:
        return writeSvg(path, content, options);
    case ImageFormat::Pdf:
        return writePdf(path, content, options);
    }
}
} // namespace headlight::render
