#include "export/embedded_metadata.h"

#include "export/atomic_write.h"

#include <QFile>
#include <QFileInfo>
#include <QImageReader>
#include <QXmlStreamReader>
#include <QXmlStreamWriter>

namespace headlight::render {
namespace {

constexpr char kMetadataStart[] = "<metadata>";
constexpr char kMetadataEnd[] = "</metadata>\n";
constexpr char kCsvPrefix[] = "# headlight-provenance: ";

QByteArray readAll(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw ExportError(
            QStringLiteral("cannot read %1: %2").arg(path, file.errorString()).toStdString());
    return file.readAll();
}

// The text of the first headlight:provenance element in an XML document (or a part of one).
std::optional<QString> provenanceElement(const QByteArray& xml) {
    QXmlStreamReader reader(xml);
    while (!reader.atEnd()) {
        reader.readNext();
        if (reader.isStartElement() &&
            reader.namespaceUri() == QLatin1String(kProvenanceNamespace) &&
            reader.name() == QLatin1String("provenance"))
            return reader.readElementText();
    }
    return std::nullopt;
}

std::optional<QString> pngProvenance(const QString& path) {
    QImageReader reader(path, "png");
    const QString text = reader.text(QLatin1String(kProvenanceKey));
    if (text.isEmpty()) return std::nullopt;
    return text;
}

// Why a byte search: Qt writes the XMP stream uncompressed (PDF/A asks readers to find it so),
// and Headlight needs no PDF parser to read its own packet back.
std::optional<QString> pdfProvenance(const QString& path) {
    const QByteArray pdf = readAll(path);
    const qsizetype start = pdf.indexOf("<x:xmpmeta");
    const qsizetype end = pdf.indexOf("</x:xmpmeta>", start);
    if (start < 0 || end < 0) return std::nullopt;
    return provenanceElement(pdf.mid(start, end + qsizetype(sizeof "</x:xmpmeta>") - 1 - start));
}

std::optional<QString> csvProvenance(const QString& path) {
    const QByteArray csv = readAll(path);
    for (const QByteArray& line : csv.split('\n')) {
        if (!line.startsWith('#')) break;
        if (line.startsWith(kCsvPrefix))
            return QString::fromUtf8(line.mid(qsizetype(sizeof kCsvPrefix) - 1));
    }
    return std::nullopt;
}
} // namespace

QByteArray svgWithMetadata(const QByteArray& svg, const QString& json) {
    const qsizetype open = svg.indexOf("<svg");
    const qsizetype end = open < 0 ? -1 : svg.indexOf('>', open);
    if (end < 0) return svg;
    QByteArray element;
    QXmlStreamWriter writer(&element);
    writer.writeNamespace(QLatin1String(kProvenanceNamespace), QStringLiteral("headlight"));
    writer.writeTextElement(QLatin1String(kProvenanceNamespace), QStringLiteral("provenance"),
                            json);
    return svg.left(end + 1) + "\n" + kMetadataStart + element + kMetadataEnd + svg.mid(end + 1);
}

QByteArray svgWithoutMetadata(const QByteArray& svg) {
    const qsizetype start = svg.indexOf(kMetadataStart);
    const qsizetype end = svg.indexOf(kMetadataEnd, start);
    if (start < 0 || end < 0) return svg;
    return svg.left(start) + svg.mid(end + qsizetype(sizeof kMetadataEnd) - 1);
}

QByteArray xmpPacket(const QString& title, const QString& caption, const QString& json) {
    QByteArray xmp; // QXmlStreamWriter replaces what the array holds, so the packet wraps it after
    QXmlStreamWriter writer(&xmp);
    writer.setAutoFormatting(true);
    const QString rdf = QStringLiteral("http://www.w3.org/1999/02/22-rdf-syntax-ns#");
    const QString dc = QStringLiteral("http://purl.org/dc/elements/1.1/");
    const QString xmpNs = QStringLiteral("http://ns.adobe.com/xap/1.0/");
    writer.writeNamespace(QStringLiteral("adobe:ns:meta/"), QStringLiteral("x"));
    writer.writeNamespace(rdf, QStringLiteral("rdf"));
    writer.writeNamespace(dc, QStringLiteral("dc"));
    writer.writeNamespace(xmpNs, QStringLiteral("xmp"));
    writer.writeNamespace(QLatin1String(kProvenanceNamespace), QStringLiteral("headlight"));
    writer.writeStartElement(QStringLiteral("adobe:ns:meta/"), QStringLiteral("xmpmeta"));
    writer.writeStartElement(rdf, QStringLiteral("RDF"));
    writer.writeStartElement(rdf, QStringLiteral("Description"));
    writer.writeAttribute(rdf, QStringLiteral("about"), QString());
    // dc:title and dc:description are language alternatives (XMP part 1, 8.2.2.4).
    for (const auto& [name, value] : {std::pair{QStringLiteral("title"), title},
                                      std::pair{QStringLiteral("description"), caption}}) {
        writer.writeStartElement(dc, name);
        writer.writeStartElement(rdf, QStringLiteral("Alt"));
        writer.writeStartElement(rdf, QStringLiteral("li"));
        writer.writeAttribute(QStringLiteral("xml:lang"), QStringLiteral("x-default"));
        writer.writeCharacters(value);
        writer.writeEndElement();
        writer.writeEndElement();
        writer.writeEndElement();
    }
    writer.writeTextElement(xmpNs, QStringLiteral("CreatorTool"), QStringLiteral("Headlight"));
    writer.writeTextElement(QLatin1String(kProvenanceNamespace), QStringLiteral("provenance"),
                            json);
    writer.writeEndElement();
    writer.writeEndElement();
    writer.writeEndElement();
    return "<?xpacket begin=\"\xEF\xBB\xBF\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n" + xmp +
           "\n<?xpacket end=\"r\"?>";
}

QByteArray csvComments(const QString& json, const QStringList& notes) {
    QByteArray lines;
    for (const QString& note : notes)
        lines += "# " + note.toUtf8() + "\n";
    return lines + kCsvPrefix + json.toUtf8() + "\n";
}

QByteArray csvWithoutComments(const QByteArray& csv) {
    qsizetype at = 0;
    while (at < csv.size() && csv.at(at) == '#') {
        const qsizetype end = csv.indexOf('\n', at);
        at = end < 0 ? csv.size() : end + 1;
    }
    return csv.mid(at);
}

std::optional<QString> readEmbeddedProvenance(const QString& path) {
    if (!QFileInfo(path).isFile())
        throw ExportError(QStringLiteral("cannot read %1: no such file").arg(path).toStdString());
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("png") || suffix == QLatin1String("apng"))
        return pngProvenance(path);
    if (suffix == QLatin1String("svg")) return provenanceElement(readAll(path));
    if (suffix == QLatin1String("pdf")) return pdfProvenance(path);
    if (suffix == QLatin1String("csv")) return csvProvenance(path);
    return std::nullopt;
}
} // namespace headlight::render
