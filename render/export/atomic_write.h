#pragma once
// Every export file is written atomically: the bytes go to a temporary file beside the target
// (same folder, so the final rename cannot cross file systems), which is renamed over the target
// only once everything was written. On any failure the temporary file is removed and the target,
// if it existed, is left as it was: a reader never sees a half-written figure.

#include <QByteArray>
#include <QIODevice>
#include <QString>
#include <functional>
#include <stdexcept>

namespace headlight::render {

// One line, naming the file and the reason.
class ExportError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

[[noreturn]] void failExport(const QString& path, const QString& reason);

// Opens a temporary file beside `path`, lets `write` fill it (it throws ExportError to give up),
// then renames it over `path`. Throws ExportError.
void writeAtomically(const QString& path, const std::function<void(QIODevice&)>& write);
// `bytes` as the whole file at `path`, atomically. Throws ExportError.
void writeBytesAtomically(const QString& path, const QByteArray& bytes);
} // namespace headlight::render
