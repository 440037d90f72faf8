#include "variants/attention_prior.h"

namespace headlight::variants {

void applyScorePrior(Backend& backend, const Prior& prior, int layer, DeviceTensor& scores, AttentionMemory& memory) {
    const bool residual = prior.kind == Prior::Kind::Residual || prior.kind == Prior::Kind::ResidualMean;
    if (!residual) return;
    if (memory.residualScores.valid()) {
        if (prior.kind == Prior::Kind::Residual) {
            backend.binary(scores, memory.residualScores, BinaryOp::Add, scores);
        } else {
            DeviceTensor earlier = backend.allocate(scores.shape());
            backend.map(memory.residualScores, MapOp::Affine, float(layer), 0.0f, earlier);
            backend.binary(scores, earlier, BinaryOp::Add, scores);
            backend.map(scores, MapOp::Affine, 1.0f / float(layer + 1), 0.0f, scores);
        }
    }
    // Why a copy: the caller goes on to add biases to `scores`, which must not enter the stream.
    memory.residualScores = backend.allocate(scores.shape());
    backend.copyRows(scores, 0, scores.size() / scores.shape().back(), memory.residualScores, 0);
}

bool reusesSharedMap(const Prior& prior, int layer, const AttentionMemory& memory) {
    return prior.kind == Prior::Kind::Share && layer % prior.every != 0 && memory.sharedProbabilities.valid();
}
} // namespace headlight::variants
