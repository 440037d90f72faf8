#pragma once
// Steering vectors on disk.
//
// Headlight's own (headlight steer): a safetensors file, written atomically, with one f32 tensor
// "steering_vector" [d] and the metadata
//   format    "headlight-steering-vector"
//   hook      the TransformerLens hook it was read at and is added at, "blocks.L.hook_resid_post"
//   method    "difference-of-means", positions "last", positive_texts and negative_texts (counts),
//   model     the checkpoint it was computed on
// Read back, the tensor must be 1-D and finite and the format and hook present.
//
// llama.cpp's control vectors (common_control_vector_load_one, llama-adapter.cpp): a GGUF file
// of 1-D tensors "direction.N", N ≥ 1, all of one length, each added to the output of block N
// (0-based: l_out of layer N; block 0's output is never steered); a direction named twice is
// summed, as llama.cpp sums them. llama.cpp reads F32 only; Headlight also widens F16.

#include "io/gguf.h"
#include "tensor/tensor.h"

#include <map>
#include <string>
#include <vector>

namespace headlight::io {

class SteeringVectorError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct SteeringVectorFile {
    std::string hook;
    Tensor direction;                            // [d]
    std::map<std::string, std::string> metadata; // every key, hook and format included
};

// Throws CheckpointError when the file cannot be written.
void writeSteeringVector(const std::string& path, const Tensor& direction,
                         std::map<std::string, std::string> metadata);
// Throws SteeringVectorError (or the safetensors reader's CheckpointError) in one line.
SteeringVectorFile readSteeringVector(const std::string& path);

struct ControlDirection {
    int block = 0;    // added to this block's output
    Tensor direction; // [d]
};

// The directions of a parsed GGUF control vector, by block. Throws SteeringVectorError naming
// `name` for a tensor not named direction.N (N ≥ 1), not 1-D, of another length, or not finite.
std::vector<ControlDirection> controlVectorDirections(const GgufFile& file,
                                                      const std::string& name);
} // namespace headlight::io
