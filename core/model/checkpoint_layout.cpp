#include "checkpoint_layout.h"

#include "model/model_family.h"
#include "model/unexpected_tensors.h"

namespace headlight {

HostWeights readWeights(const io::Checkpoint& checkpoint, const ModelSpec& spec) {
    std::set<std::string> read;
    HostWeights weights = familyOf(spec.architecture).readWeights(checkpoint, spec, read);
    rejectUnexpectedTensors(checkpoint, spec.architecture, weights.prefix, read);
    return weights;
}
} // namespace headlight
