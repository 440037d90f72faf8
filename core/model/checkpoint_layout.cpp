#include "checkpoint_layout.h"

#include "model/model_family.h"
#include "model/unexpected_tensors.h"

namespace headlight {

HostWeights readWeights(const io::Checkpoint& checkpoint, const ModelSpec& spec) {
    std::set<std::string> read;
    const ModelFamily& family = familyOf(spec.architecture);
    HostWeights weights = family.readWeights(checkpoint, spec, read);
    if (family.readLmHead)
        weights.lmHead = family.readLmHead(checkpoint, spec, read);
    else
        weights.lmHead.absence = std::string("Headlight reads no LM head of ") +
                                 family.displayName + " checkpoints, so it has no logits";
    rejectUnexpectedTensors(checkpoint, spec.architecture, weights.prefix, read);
    return weights;
}
} // namespace headlight
