#pragma once
// TransformerModel: one forward pass written once against the Backend ops, for every supported
// architecture. The blocks differ only in where the norms sit and how positions enter:
//
//   post-LN (BERT, RoBERTa, DistilBERT):  x = LN₁(x + Attn(x));     x = LN₂(x + FFN(x))
//   pre-LN  (GPT-2, Llama family):        x = x + Attn(N₁(x));      x = x + FFN(N₂(x));  final N
//
// positions: learned absolute embeddings added to the token embeddings (BERT family, GPT-2), or
// rotary embeddings applied to q and k inside attention (Llama family).

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "model/checkpoint_layout.h"
#include "model/model_spec.h"
#include "model/trace.h"

namespace headlight {

class ModelError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct ModelInput {
    std::vector<int32_t> ids;           // [T]
    std::vector<int32_t> tokenTypes;    // [T] or empty (all 0)
    std::vector<uint8_t> attentionMask; // [T] or empty (all 1)
};

class TransformerModel {
public:
    // Uploads the weights to `backend` once; they are reused by every forward pass.
    TransformerModel(ModelSpec spec, const HostWeights& weights, Backend& backend);

    const ModelSpec& spec() const { return spec_; }
    Backend& backend() const { return backend_; }
    const std::string& weightPrefix() const { return prefix_; }

    // Throws ModelError for empty input, over-long sequences, ids or token types out of range.
    Trace forward(const ModelInput& input, const CaptureRequest& capture = {}) const;
    void validate(const ModelInput& input) const;

private:
    struct Linear {
        DeviceTensor weight, bias; // bias invalid when absent
    };
    struct Norm {
        DeviceTensor gamma, beta; // beta invalid for RMSNorm
    };
    struct Layer {
        Linear query, key, value, output, up, gate, down;
        Norm attentionNorm, ffnNorm;
    };
    struct PendingCapture {
        DeviceTensor scores, probabilities; // invalid when not asked for
    };

    Linear upload(const HostLinear& linear) const;
    Norm upload(const HostNorm& norm) const;
    DeviceTensor embed(const ModelInput& input) const;
    void normalize(const Norm& norm, const DeviceTensor& x, DeviceTensor& out) const;
    void project(const Linear& linear, const DeviceTensor& x, DeviceTensor& out) const;
    DeviceTensor attend(const Layer& layer, const DeviceTensor& x, const ModelInput& input,
                        PendingCapture* capture) const;
    DeviceTensor feedForward(const Layer& layer, const DeviceTensor& x) const;
    std::vector<int32_t> positionIds(const ModelInput& input) const;
    bool preNorm() const;

    ModelSpec spec_;
    Backend& backend_;
    std::string prefix_;
    DeviceTensor tokenEmbedding_, positionEmbedding_, tokenTypeEmbedding_;
    Norm embeddingNorm_, finalNorm_;
    std::vector<Layer> layers_;
};

// Reads config.json and the weights of a checkpoint folder and uploads them to `backend`.
// Throws io::CheckpointError or ModelError with a one-line reason.
std::unique_ptr<TransformerModel> loadModel(const std::string& folder, Backend& backend);
} // namespace headlight
