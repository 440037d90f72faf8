#include "io/mapped_file.h"

#include "io/tensor_file.h"

#include <QFileInfo>

namespace headlight::io {

MappedFile::MappedFile(const std::string& path)
    : file_(QString::fromStdString(path)) {
    const auto fail = [&](const std::string& problem) {
        throw CheckpointError(path + ": " + problem);
    };
    const QFileInfo info(file_.fileName());
    if (!info.exists()) fail("file does not exist");
    if (!info.isFile()) fail("not a regular file");
    if (!file_.open(QIODevice::ReadOnly))
        fail("cannot open (" + file_.errorString().toStdString() + ")");
    const qint64 size = file_.size();
    if (size == 0) return;
    const uchar* base = file_.map(0, size);
    if (!base) fail("cannot map into memory (" + file_.errorString().toStdString() + ")");
    bytes_ = {reinterpret_cast<const std::byte*>(base), static_cast<std::size_t>(size)};
}
} // namespace headlight::io
