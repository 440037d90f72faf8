#pragma once
// A Hugging Face checkpoint folder: config.json plus model.safetensors, or sharded
// model-0000x-of-0000n.safetensors listed by model.safetensors.index.json. PyTorch pickles
// (pytorch_model.bin, *.pt, *.pth, *.ckpt) are never opened: a folder that has only those is
// refused with a message saying to convert it to safetensors. Tensors are known by the names
// Hugging Face loads them under (io/legacy_names.h): a stored LayerNorm.gamma is LayerNorm.weight.

#include "io/safetensors.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace headlight::io {

class Checkpoint {
public:
    // Opens and validates every shard; throws CheckpointError naming the file and the problem.
    explicit Checkpoint(const std::string& folder);

    const std::string& folder() const { return folder_; }
    std::vector<std::string> names() const; // every tensor name, sorted
    bool contains(const std::string& name) const;
    // Both throw CheckpointError: "<folder>: missing tensor 'name'" for an unknown name.
    const TensorInfo& info(const std::string& name) const;
    Tensor loadF32(const std::string& name) const;

private:
    void addFile(const std::string& path);         // opens one file; a name seen before is an error
    void openShards(const std::string& indexPath); // every shard the index names, cross-checked
    struct Stored {
        std::size_t file; // files_ index
        std::string name; // the name in that file (a legacy name before its rename)
    };
    const Stored& storedAs(const std::string& name) const;
    std::string folder_;
    std::vector<std::unique_ptr<SafetensorsFile>> files_;
    std::map<std::string, Stored> fileIndex_; // tensor name, as loaded → where it is stored
};
} // namespace headlight::io
