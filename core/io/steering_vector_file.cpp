#include "io/steering_vector_file.h"

#include "io/safetensors.h"
#include "io/tensor_file.h"

#include <algorithm>
#include <cmath>
#include <regex>

namespace headlight::io {
namespace {

constexpr const char* kSteeringFormat = "headlight-steering-vector";
constexpr const char* kSteeringTensor = "steering_vector";

bool finite(const Tensor& t) {
    for (std::size_t i = 0; i < t.size(); ++i)
        if (!std::isfinite(t.data()[i])) return false;
    return true;
}
} // namespace

void writeSteeringVector(const std::string& path, const Tensor& direction,
                         std::map<std::string, std::string> metadata) {
    metadata["format"] = kSteeringFormat;
    writeSafetensors(path,
                     {{kSteeringTensor,
                       {int64_t(direction.size())},
                       std::vector<float>(direction.data(), direction.data() + direction.size()),
                       {},
                       {},
                       {}}},
                     metadata);
}

SteeringVectorFile readSteeringVector(const std::string& path) {
    const SafetensorsFile file(path);
    const auto fail = [&](const std::string& reason) {
        throw SteeringVectorError(path + ": " + reason);
    };
    const auto& metadata = file.metadata();
    const auto format = metadata.find("format");
    if (format == metadata.end() || format->second != kSteeringFormat)
        fail("not a Headlight steering vector (its metadata has no format \"" +
             std::string(kSteeringFormat) + "\")");
    const auto hook = metadata.find("hook");
    if (hook == metadata.end()) fail("the metadata names no hook");
    if (!file.contains(kSteeringTensor)) fail("no tensor \"steering_vector\"");
    SteeringVectorFile vector{hook->second, file.loadF32(kSteeringTensor), metadata};
    if (vector.direction.rank() != 1 || vector.direction.size() == 0)
        fail("\"steering_vector\" is " + vector.direction.shapeString() + ", not [d]");
    if (!finite(vector.direction)) fail("\"steering_vector\" holds a NaN or an infinity");
    return vector;
}

std::vector<ControlDirection> controlVectorDirections(const GgufFile& file,
                                                      const std::string& name) {
    static const std::regex pattern(R"(direction\.([0-9]{1,6}))");
    const auto fail = [&](const std::string& reason) {
        throw SteeringVectorError(name + ": " + reason);
    };
    std::vector<ControlDirection> directions;
    for (const GgufTensor& tensor : file.tensors) {
        std::smatch match;
        if (!std::regex_match(tensor.name, match, pattern))
            fail("tensor " + quotedName(tensor.name) +
                 " is not a control vector direction (direction.N, N the block from 1)");
        const int block = std::stoi(match[1].str());
        if (block == 0)
            fail("direction.0: llama.cpp's control vectors steer blocks from 1 (block 0's output "
                 "is never steered)");
        if (tensor.dims.size() != 1)
            fail("tensor " + tensor.name + " has " + std::to_string(tensor.dims.size()) +
                 " dimensions, not 1");
        if (!directions.empty() && tensor.values.size() != directions.front().direction.size())
            fail("tensor " + tensor.name + " has " + std::to_string(tensor.values.size()) +
                 " values, the first direction " +
                 std::to_string(directions.front().direction.size()));
        if (!finite(tensor.values)) fail("tensor " + tensor.name + " holds a NaN or an infinity");
        const auto same = std::find_if(directions.begin(), directions.end(),
                                       [&](const ControlDirection& d) { return d.block == block; });
        if (same == directions.end()) {
            directions.push_back({block, tensor.values});
            continue;
        }
        for (std::size_t i = 0; i < tensor.values.size(); ++i)
            same->direction.data()[i] += tensor.values.data()[i];
    }
    if (directions.empty()) fail("no direction tensors");
    return directions;
}
} // namespace headlight::io
