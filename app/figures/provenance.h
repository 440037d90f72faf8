#pragma once
// What an exported figure or table was made from, written into the file (PNG text chunk, SVG
// <metadata>, PDF XMP, CSV "#" lines, safetensors metadata: render/export/embedded_metadata.h)
// and read back by `headlight reproduce`: the Scenario (model, text, variant spec, view,
// selection, colour map, backend asked for) plus what the Scenario cannot say by itself, namely
// the SHA-256 of every file of the model that was read, the corpus file's hash, the backend and
// device that ran, the Headlight version and git revision, the `headlight export ...` command
// line that regenerates the file, and the SHA-256 of the figure's numbers. docs/export.md lists
// the JSON keys.

#include "export/figure_export.h"
#include "file_hashes.h"
#include "io/scenario.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <optional>
#include <stdexcept>

namespace headlight::app {

struct LoadedModel;

struct CorpusFile {
    QString path; // absolute
    QString sha256;
    bool operator==(const CorpusFile&) const = default;
};

struct Provenance {
    QString modelName;   // the folder's name, or the Hugging Face cache id
    QString modelFolder; // the absolute folder that was read
    ModelFiles files;
    io::Scenario scenario;
    std::optional<CorpusFile> corpus; // `--texts FILE`
    QString backend;                  // "cpu" or "vulkan": what ran, not what was asked for
    QString device;                   // the backend's device name
    QString version;                  // Headlight's
    QString revision;                 // the build's git revision
    QStringList command;              // the arguments after `headlight`: {"export", …}
    QString dataSha256;               // of the figure's numbers as CSV (render::figureData)
    bool operator==(const Provenance&) const = default;
};

class ProvenanceError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Everything but `command` and `corpus`, which the caller knows.
Provenance describeExport(const LoadedModel& model, const io::Scenario& scenario,
                          const render::PageContent& content);
// SHA-256 of the figure's numbers; empty for a figure with none.
QString figureDataSha256(const render::PageContent& content);

QJsonObject provenanceToJson(const Provenance& provenance);
// Throws ProvenanceError naming the key that is missing or malformed.
Provenance provenanceFromJson(const QJsonObject& json);
// `command` as one line a POSIX shell runs: "headlight export --model … --out fig.png".
QString shellCommandLine(const QStringList& command);

// The provenance an export file carries (any format exportToFile writes); nothing when it
// carries none. Throws ProvenanceError or render::ExportError with one line.
std::optional<Provenance> readProvenance(const QString& path);
} // namespace headlight::app
