#pragma once
// A residual-stream edit as the command line and a scenario name it, without tensors: an SAE's
// feature edits at its hook (analysis/sae_edit.h), or a steering vector file times a strength
// (analysis/steering_vector.h: a `headlight steer` .safetensors at its hook, or a llama.cpp
// .gguf control vector, direction.N at block N's output). residualEditsOf reads the files for
// one model and gives the variants::ResidualEdit the pass applies.

#include "analysis/sae_edit.h"
#include "model/model_spec.h"
#include "variants/intervention.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace headlight::analysis {

struct ResidualEditSpec {
    std::string sae;            // an SAE folder, or ORG/NAME/FOLDER of the cache; empty: a vector
    SaeFeatureEdits features;   // with `sae`
    std::string steeringVector; // with no `sae`: the vector file
    float strength = 1.0f;      // with `steeringVector`
    bool operator==(const ResidualEditSpec&) const = default;
};

class ResidualEditError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct HookedEdit {
    std::string hook;   // the TransformerLens hook it edits, e.g. blocks.1.hook_resid_post
    std::string source; // the SAE folder as resolved, or the vector file
    variants::ResidualEdit edit;
};

// Reads the SAE folder or the vector file and builds the edits for a model of `model`. Throws
// ResidualEditError with a one-line reason: the folder's or the file's own refusal, a hook or a
// block the model lacks, a width other than the residual stream's, a feature past d_sae, a clamp
// without a splice.
std::vector<HookedEdit> residualEditsOf(const ResidualEditSpec& spec, const ModelSpec& model);
} // namespace headlight::analysis
