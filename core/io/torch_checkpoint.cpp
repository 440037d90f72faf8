#include "io/torch_checkpoint.h"

#include "io/dtype_widening.h"
#include "io/mapped_file.h"
#include "io/torch_pickle.h"
#include "io/torch_zip_archive.h"

#include <cstring>

namespace headlight::io {
namespace {
constexpr const char* kResave = "re-save with a current torch";

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
    throw CheckpointError(path + ": " + problem);
}

bool startsWith(std::span<const std::byte> file, std::string_view text, std::size_t at = 0) {
    return file.size() >= at + text.size() &&
           std::memcmp(file.data() + at, text.data(), text.size()) == 0;
}

// torch.save before 1.6 (and with _use_new_zipfile_serialization=False) writes a bare pickle,
// starting with a PROTO opcode; torch before 0.1.10 wrote a tar archive.
void checkIsZip(const std::string& path, std::span<const std::byte> file) {
    if (startsWith(file, "PK\x03\x04")) return;
    if (startsWith(file, "\x80") || startsWith(file, "ustar", 257))
        fail(path, std::string("a legacy torch.save file (not a zip archive), which Headlight does "
                               "not read: ") +
                       kResave);
    fail(path, std::string("not a zip archive, so not a torch.save file: ") + kResave);
}

bool isRowMajor(const std::vector<int64_t>& shape, const std::vector<int64_t>& stride) {
    int64_t expected = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
        if (shape[i] != 1 && stride[i] != expected) return false;
        expected *= shape[i];
    }
    return true;
}
} // namespace

TorchCheckpointFile::TorchCheckpointFile(const std::string& path)
    : path_(path)
    , mapped_(std::make_unique<MappedFile>(path))
    , file_(mapped_->bytes()) {
    open();
}

TorchCheckpointFile::TorchCheckpointFile(std::string path, std::unique_ptr<MappedFile> mapped,
                                         std::vector<std::byte> owned)
    : path_(std::move(path))
    , mapped_(std::move(mapped))
    , owned_(std::move(owned))
    , file_(owned_) {
    open();
}

std::unique_ptr<TorchCheckpointFile>
TorchCheckpointFile::fromBytes(const std::string& name, std::span<const std::byte> file) {
    return std::unique_ptr<TorchCheckpointFile>(
        new TorchCheckpointFile(name, nullptr, {file.begin(), file.end()}));
}

TorchCheckpointFile::~TorchCheckpointFile() = default;

// torch's reader finds every record under one top folder named by the writer ("archive" since
// torch 1.7, the file's stem before); an archive spread over several is not torch's.
std::string TorchCheckpointFile::findRootFolder() const {
    const auto& entries = archive_->entries();
    if (entries.empty()) fail(path_, "the zip archive is empty, not a torch.save file");
    const std::string& first = entries.front().name;
    const std::string root = first.substr(0, first.find('/'));
    for (const ZipEntry& entry : entries)
        if (entry.name.size() <= root.size() || entry.name.compare(0, root.size(), root) != 0 ||
            entry.name[root.size()] != '/')
            fail(path_, "entries " + quotedName(first) + " and " + quotedName(entry.name) +
                            " lie in different top folders; torch.save writes one");
    return root;
}

// Since torch 2.1 the archive records the writer's byte order; older archives are little-endian.
void TorchCheckpointFile::checkByteOrder(const std::string& root) const {
    const ZipEntry* entry = archive_->find(root + "/byteorder");
    if (!entry) return;
    const auto bytes = archive_->data(*entry);
    const std::string order(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (order == "little") return;
    if (order == "big")
        fail(path_, std::string("written on a big-endian machine (byteorder 'big'): ") + kResave +
                        " on a little-endian machine");
    fail(path_, "the byteorder record is neither 'little' nor 'big'");
}

void TorchCheckpointFile::open() {
    checkIsZip(path_, file_);
    archive_ = std::make_unique<ZipArchive>(path_, file_);
    const std::string root = findRootFolder();
    checkByteOrder(root);
    const ZipEntry* pickle = archive_->find(root + "/data.pkl");
    if (!pickle)
        fail(path_,
             "no " + quotedName(root + "/data.pkl") + " in the archive, so not a torch.save file");
    archive_->checkCrc(*pickle);
    const auto pickleBytes = archive_->data(*pickle);
    const PickledStateDict state = readStateDictPickle(
        path_ + ": " + pickle->name,
        {reinterpret_cast<const char*>(pickleBytes.data()), pickleBytes.size()});

    std::vector<const ZipEntry*> storages;
    for (const PickledStorage& storage : state.storages) {
        const std::string record = root + "/data/" + storage.key;
        const ZipEntry* entry = archive_->find(record);
        if (!entry)
            fail(path_,
                 "storage " + quotedName(storage.key) + " has no record " + quotedName(record));
        const std::size_t size = dtypeSize(storage.dtype);
        if (storage.elements > entry->size / size || storage.elements * size != entry->size)
            fail(path_, "storage " + quotedName(storage.key) + " declares " +
                            std::to_string(storage.elements) + " " + dtypeName(storage.dtype) +
                            " elements but " + quotedName(record) + " holds " +
                            std::to_string(entry->size) + " bytes");
        storages.push_back(entry);
    }
    for (const PickledTensor& tensor : state.tensors) {
        const PickledStorage& storage = state.storages[tensor.storage];
        const ZipEntry* entry = storages[tensor.storage];
        const uint64_t size = dtypeSize(storage.dtype);
        uint64_t last = tensor.offset;
        bool empty = false;
        for (std::size_t i = 0; i < tensor.shape.size(); ++i) {
            empty = empty || tensor.shape[i] == 0;
            if (tensor.shape[i] > 0)
                last += uint64_t(tensor.shape[i] - 1) * uint64_t(tensor.stride[i]);
        }
        TensorInfo info{tensor.name, storage.dtype, tensor.shape,
                        entry->dataOffset + tensor.offset * size,
                        entry->dataOffset + (empty ? tensor.offset : last + 1) * size};
        tensors_.emplace(tensor.name, std::move(info));
        views_.emplace(tensor.name, View{entry, tensor.offset, tensor.stride});
    }
}

const TensorInfo& TorchCheckpointFile::info(const std::string& name) const {
    const auto found = tensors_.find(name);
    if (found == tensors_.end()) fail(path_, "missing tensor " + quotedName(name));
    return found->second;
}

std::vector<std::byte> TorchCheckpointFile::storedBytes(const std::string& name) const {
    const TensorInfo& tensor = info(name);
    const View& view = views_.at(name);
    archive_->checkCrc(*view.storage);
    const std::size_t size = dtypeSize(tensor.dtype);
    const std::size_t elements = std::size_t(elementCount(tensor.shape));
    const auto storage = archive_->data(*view.storage);
    if (isRowMajor(tensor.shape, view.stride)) {
        const auto bytes = storage.subspan(view.offset * size, elements * size);
        return {bytes.begin(), bytes.end()};
    }
    // An odometer over the indices, carrying from the last dimension; the checks at open time
    // keep every element inside the storage.
    std::vector<std::byte> out(elements * size);
    std::vector<int64_t> index(tensor.shape.size(), 0);
    uint64_t at = view.offset;
    for (std::size_t n = 0; n < elements; ++n) {
        std::memcpy(out.data() + n * size, storage.data() + at * size, size);
        for (std::size_t d = index.size(); d-- > 0;) {
            at += uint64_t(view.stride[d]);
            if (++index[d] < tensor.shape[d]) break;
            at -= uint64_t(view.stride[d]) * uint64_t(tensor.shape[d]);
            index[d] = 0;
        }
    }
    return out;
}

Tensor TorchCheckpointFile::loadF32(const std::string& name) const {
    const TensorInfo& tensor = info(name);
    const std::vector<std::byte> bytes = storedBytes(name);
    std::vector<float> values(bytes.size() / dtypeSize(tensor.dtype));
    widenToF32(tensor.dtype, bytes, values.data());
    return Tensor(tensor.shape, std::move(values));
}
} // namespace headlight::io
