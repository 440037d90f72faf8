#pragma once
// pytorch_model.bin and its shards: the zip archives torch.save writes (torch 1.6 and later),
// read without executing anything. The archive (io/torch_zip_archive.h) must hold one top folder
// with data.pkl, whose pickle (io/torch_pickle.h) must be a state dict; each storage it names is
// the stored entry data/<key>, exactly as long as its declared elements, read in place from the
// mapped file. Views (offset, stride) are checked against their storage and read exactly, shared
// storages (tied weights) included. Legacy files (a bare pickle or tar, torch < 1.6 or
// _use_new_zipfile_serialization=False) and big-endian archives are refused with "re-save with a
// current torch". Everything is checked when the file is opened, before any tensor is read.

#include "io/tensor_file.h"

#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace headlight::io {

class MappedFile;
class ZipArchive;
struct ZipEntry;

class TorchCheckpointFile : public TensorFile {
public:
    // Maps and validates `path`; throws CheckpointError.
    explicit TorchCheckpointFile(const std::string& path);
    // Validates a copy of a whole file already in memory, `name` standing for the path in
    // messages. Why: the fuzzer drives the reader at memory speed, with no file per input.
    static std::unique_ptr<TorchCheckpointFile> fromBytes(const std::string& name,
                                                          std::span<const std::byte> file);
    ~TorchCheckpointFile() override;
    TorchCheckpointFile(const TorchCheckpointFile&) = delete;
    TorchCheckpointFile& operator=(const TorchCheckpointFile&) = delete;

    const std::string& path() const override { return path_; }
    const std::map<std::string, TensorInfo>& tensors() const override { return tensors_; }
    const TensorInfo& info(const std::string& name) const override;
    Tensor loadF32(const std::string& name) const override;
    // Copied out of the view (a storage's CRC-32 is checked on each read).
    std::vector<std::byte> storedBytes(const std::string& name) const override;

private:
    struct View {
        const ZipEntry* storage = nullptr;
        uint64_t offset = 0; // in elements
        std::vector<int64_t> stride;
    };
    TorchCheckpointFile(std::string path, std::unique_ptr<MappedFile> mapped,
                        std::vector<std::byte> owned);
    void open();
    std::string findRootFolder() const;
    void checkByteOrder(const std::string& root) const;

    std::string path_;
    std::unique_ptr<MappedFile> mapped_; // the file, when opened from a path
    std::vector<std::byte> owned_;       // the file, when given as bytes
    std::span<const std::byte> file_;
    std::unique_ptr<ZipArchive> archive_;
    std::map<std::string, TensorInfo> tensors_;
    std::map<std::string, View> views_;
};
} // namespace headlight::io
