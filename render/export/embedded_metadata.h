#pragma once
// Where an export file carries its provenance (a compact JSON object the app layer writes,
// app/figures/provenance.h), format by format, and how it is read back:
//
//   PNG  a text chunk keyed "headlight-provenance" (QImageWriter::setText: tEXt/zTXt, or iTXt
//        when the JSON is not Latin-1); an animated PNG (.png, .apng) keeps its first frame's
//   SVG  <metadata><headlight:provenance xmlns:headlight="urn:headlight:provenance">JSON…
//   PDF  the document's XMP packet: dc:title, dc:description (the caption), xmp:CreatorTool and
//        headlight:provenance; the document info holds the title and the creator
//   CSV  leading comment lines, one "# headlight-provenance: JSON" among them (any "#" line
//        before the header is a comment)
//
// Render knows the places, not the fields: the JSON is opaque here.

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <optional>

namespace headlight::render {

inline constexpr char kProvenanceKey[] = "headlight-provenance";
inline constexpr char kProvenanceNamespace[] = "urn:headlight:provenance";

// The SVG with a <metadata> element holding `json` right after the <svg> start tag.
QByteArray svgWithMetadata(const QByteArray& svg, const QString& json);
// The SVG without its <metadata> element: what was drawn, for comparing two exports.
QByteArray svgWithoutMetadata(const QByteArray& svg);
// An XMP packet (UTF-8) with the title, the caption and `json`.
QByteArray xmpPacket(const QString& title, const QString& caption, const QString& json);
// "# headlight-provenance: JSON" and each of `notes` as a "# " line, each ending in "\n".
QByteArray csvComments(const QString& json, const QStringList& notes);
// A CSV file's bytes less its leading "#" lines: the table.
QByteArray csvWithoutComments(const QByteArray& csv);

// The provenance JSON a file carries (by its extension: .png, .svg, .pdf, .csv), or nothing when
// it carries none. Throws ExportError (one line) when the file cannot be read.
std::optional<QString> readEmbeddedProvenance(const QString& path);
} // namespace headlight::render
