#pragma once
// A NumPy .npz archive (numpy.savez): a zip of NAME.npy entries, one array each. The zip is read
// by the hardened reader of torch.save files (torch_zip_archive.h: stored entries only, every
// offset checked, no overlaps, CRC-32 verified) and each entry by parseNpy (npy_array.h).
// numpy.savez_compressed's deflated entries are refused in one line. Exposed as a TensorFile so
// that what reads safetensors weights reads these the same way; a tensor is named by its entry
// without ".npy". Every failure throws CheckpointError naming the file.

#include "io/npy_array.h"
#include "io/tensor_file.h"

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace headlight::io {

class MappedFile;
class ZipArchive;

class NpzFile : public TensorFile {
public:
    explicit NpzFile(const std::string& path);
    // An archive given as bytes (copied), named `name` in messages: for the fuzzers.
    static std::unique_ptr<NpzFile> fromBytes(const std::string& name,
                                              std::span<const std::byte> file);
    ~NpzFile() override;
    NpzFile(const NpzFile&) = delete;
    NpzFile& operator=(const NpzFile&) = delete;

    const std::string& path() const override { return path_; }
    const std::map<std::string, TensorInfo>& tensors() const override { return infos_; }
    const TensorInfo& info(const std::string& name) const override;
    Tensor loadF32(const std::string& name) const override;
    std::vector<std::byte> storedBytes(const std::string& name) const override;

private:
    NpzFile(std::string path, std::vector<std::byte> owned);
    void readEntries();
    const NpyArray& array(const std::string& name) const;

    std::string path_;
    std::unique_ptr<MappedFile> mapped_;
    std::vector<std::byte> owned_;
    std::span<const std::byte> file_;
    std::unique_ptr<ZipArchive> archive_;
    std::map<std::string, NpyArray> arrays_;
    std::map<std::string, TensorInfo> infos_;
};
} // namespace headlight::io
