#include "io/npz_file.h"

#include "io/mapped_file.h"
#include "io/torch_zip_archive.h"

namespace headlight::io {
namespace {
constexpr std::string_view kNpySuffix = ".npy";
} // namespace

NpzFile::NpzFile(const std::string& path)
    : path_(path)
    , mapped_(std::make_unique<MappedFile>(path)) {
    file_ = mapped_->bytes();
    readEntries();
}

NpzFile::NpzFile(std::string path, std::vector<std::byte> owned)
    : path_(std::move(path))
    , owned_(std::move(owned)) {
    file_ = owned_;
    readEntries();
}

std::unique_ptr<NpzFile> NpzFile::fromBytes(const std::string& name,
                                            std::span<const std::byte> file) {
    return std::unique_ptr<NpzFile>(
        new NpzFile(name, std::vector<std::byte>(file.begin(), file.end())));
}

NpzFile::~NpzFile() = default;

void NpzFile::readEntries() {
    archive_ = std::make_unique<ZipArchive>(path_, file_);
    for (const ZipEntry& entry : archive_->entries()) {
        const std::string& name = entry.name;
        if (name.size() <= kNpySuffix.size() || !name.ends_with(kNpySuffix))
            throw CheckpointError(path_ + ": entry " + quotedName(name) +
                                  " is not an .npy array, which is all numpy.savez writes");
        archive_->checkCrc(entry);
        const std::string key = name.substr(0, name.size() - kNpySuffix.size());
        NpyArray array = parseNpy(path_ + " " + quotedName(name), archive_->data(entry));
        const auto begin = uint64_t(array.elements.data() - file_.data());
        infos_[key] = {key, array.dtype, array.shape, begin, begin + array.elements.size()};
        arrays_.emplace(key, std::move(array));
    }
}

const NpyArray& NpzFile::array(const std::string& name) const {
    const auto found = arrays_.find(name);
    if (found == arrays_.end()) throw CheckpointError(path_ + ": has no array " + quotedName(name));
    return found->second;
}

const TensorInfo& NpzFile::info(const std::string& name) const {
    array(name);
    return infos_.at(name);
}

Tensor NpzFile::loadF32(const std::string& name) const {
    const NpyArray& a = array(name);
    return Tensor(a.shape, npyToF32(a));
}

std::vector<std::byte> NpzFile::storedBytes(const std::string& name) const {
    const NpyArray& a = array(name);
    if (!a.fortranOrder || a.shape.size() < 2) return {a.elements.begin(), a.elements.end()};
    throw CheckpointError(path_ + ": " + quotedName(name) +
                          " is in Fortran order, whose stored bytes are not row-major");
}
} // namespace headlight::io
