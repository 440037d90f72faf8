#pragma once
// WeightReader: reads a checkpoint's tensors under one name prefix, checking each shape against
// what config.json implies and every value for finiteness, so a wrong or corrupted checkpoint
// fails with the tensor's name. Every name it reads goes into a set, so that the tensors nobody
// read can be refused afterwards (model/unexpected_tensors.h).

#include "io/checkpoint.h"
#include "model/checkpoint_layout.h"

#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace headlight {

using Shape = std::vector<int64_t>;

class WeightReader {
public:
    WeightReader(const io::Checkpoint& checkpoint, std::string prefix, std::set<std::string>& read)
        : checkpoint_(checkpoint)
        , prefix_(std::move(prefix))
        , read_(read) {}

    Tensor get(const std::string& name, const Shape& shape) const {
        const std::string full = prefix_ + name;
        const io::TensorInfo& info = checkpoint_.info(full); // throws "missing tensor"
        read_.insert(full);
        if (info.shape != shape)
            throw io::CheckpointError(checkpoint_.folder() + ": tensor '" + full + "' has shape " +
                                      shapeString(info.shape) + " but config.json implies " +
                                      shapeString(shape));
        Tensor tensor = checkpoint_.loadF32(full);
        for (float v : tensor.values())
            if (!std::isfinite(v))
                throw io::CheckpointError(checkpoint_.folder() + ": tensor '" + full +
                                          "' contains NaN or Inf values");
        return tensor;
    }
    // The [rows, cols] matrix left in its mapped file (io/stored_matrix.h), checked like get();
    // invalid when the file cannot map it in a float dtype, for the caller to get() instead.
    io::StoredMatrix mapped(const std::string& name, const Shape& shape) const {
        const std::string full = prefix_ + name;
        io::StoredMatrix matrix = checkpoint_.mappedMatrix(full); // throws "missing tensor"
        if (!matrix.valid() || matrix.shape() != shape) return {}; // get() names the misfit
        read_.insert(full);
        if (!io::allFinite(matrix))
            throw io::CheckpointError(checkpoint_.folder() + ": tensor '" + full +
                                      "' contains NaN or Inf values");
        return matrix;
    }
    Tensor optional(const std::string& name, const Shape& shape) const {
        return checkpoint_.contains(prefix_ + name) ? get(name, shape) : Tensor();
    }
    // The weight stays mapped where it can (HostLinear::stored), else it is widened.
    HostLinear linear(const std::string& name, int64_t out, int64_t in, bool bias = true) const {
        HostLinear result;
        result.stored = mapped(name + ".weight", {out, in});
        if (!result.stored.valid()) result.weight = get(name + ".weight", {out, in});
        if (bias) result.bias = get(name + ".bias", {out});
        return result;
    }
    HostNorm layerNorm(const std::string& name, int64_t d) const {
        return {get(name + ".weight", {d}), get(name + ".bias", {d})};
    }
    HostNorm rmsNorm(const std::string& name, int64_t d) const {
        return {get(name + ".weight", {d}), Tensor()};
    }
    const std::string& prefix() const { return prefix_; }

private:
    const io::Checkpoint& checkpoint_;
    std::string prefix_;
    std::set<std::string>& read_; // every full name get() has read
};

// The zoo's layout (docs/zoo-format.md), in core/model/zoo_layout.cpp; adds the names it reads
// to `read`.
HostWeights readZooWeights(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                           std::set<std::string>& read);
} // namespace headlight
