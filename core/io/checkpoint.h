#pragma once
// A Hugging Face checkpoint folder: config.json plus model.safetensors, or sharded
// model-0000x-of-0000n.safetensors listed by model.safetensors.index.json; failing those, as
// Hugging Face falls back, pytorch_model.bin or the shards pytorch_model.bin.index.json lists,
// read by the restricted torch.save reader (io/torch_checkpoint.h), which executes nothing.
// Other pickles (*.pt, *.pth, *.ckpt) are never opened: a folder that has only those is refused
// with a message saying to convert it to safetensors. Tensors are known by the names Hugging Face
// loads them under (io/legacy_names.h): a stored LayerNorm.gamma is LayerNorm.weight.

#include "io/stored_matrix.h"
#include "io/tensor_file.h"

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
    std::vector<std::byte> storedBytes(const std::string& name) const; // in the stored dtype
    // The tensor left in its mapped file (io/stored_matrix.h) when it is a 2-D F32, F16 or BF16
    // tensor of a safetensors file; invalid otherwise (torch archives, other dtypes and ranks).
    // The view keeps its file mapped after the Checkpoint is gone.
    StoredMatrix mappedMatrix(const std::string& name) const;

private:
    void addFile(const std::string& path); // opens one file; a name seen before is an error
    // Every shard the index names (each ending in `suffix`), cross-checked.
    void openShards(const std::string& indexPath, const std::string& suffix);
    struct Stored {
        std::size_t file; // files_ index
        std::string name; // the name in that file (a legacy name before its rename)
    };
    const Stored& storedAs(const std::string& name) const;
    std::string folder_;
    std::vector<std::shared_ptr<TensorFile>> files_; // shared with the StoredMatrix views
    std::map<std::string, Stored> fileIndex_; // tensor name, as loaded → where it is stored
};
} // namespace headlight::io
