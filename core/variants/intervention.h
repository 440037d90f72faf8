#pragma once
// Interventions on a forward pass: head ablation and activation patching. They edit two places of
// the pass, each written once over the Backend interface so every variant and backend runs them:
//
//   a head's output, the per-head attention output o_h = P_h V_h [T, d] before the output
//   projection W_O (Michel et al. 2019, "Are Sixteen Heads Really Better than One?"):
//     zero     o_h ← 0
//     mean     o_h[t] ← (1/|V|) Σ_{s∈V} o_h[s] for every t, V the valid (unpadded) positions
//     mean-corpus  o_h[t] ← m_h for every t, m_h the head's mean output over every valid position
//              of a corpus of texts (mean ablation as Wang et al. 2022 use it: the head's typical
//              output, not this text's)
//     replace  o_h ← o'_h, the same head's output on another text of the same length
//              (activation patching of a head, Vig et al. 2020; Meng et al. 2022)
//   the residual stream entering layer l at position p ← another pass's row (patching a layer).
//   the residual stream at one point, every position, ← edit(x) (a ResidualEdit), the point being
//   the stream entering layer l, or for l = the model's layer count the last block's output
//   before the final norm (TransformerLens's last hook_resid_post):
//     SAE feature edits at the SAE's hook (analysis/sae_edit.h, SAELens's semantics):
//       f = encode(x), f' = f clamped;  x' = decode(f') [+ (x − decode(f))] + Σ α_j · W_dec[j]
//     a steering vector (analysis/steering_vector.h; llama.cpp's control vectors):  x' = x + α·v
//   The edit runs on the CPU whatever the backend: the pass downloads the rows there, edits them
//   with the CPU SAE code and uploads the result (on Vulkan this splits the pass's submission at
//   that point, acceptable for an interactive edit; the SAE's encoder is CPU code).
//
// The ForwardPlan (forward_plan.h) takes the intervention and checks it before any op runs.

#include "backend/backend.h"
#include "tensor/tensor.h"

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace headlight::variants {

enum class AblationMode { Zero, Mean, Replace, CorpusMean };

// One knocked-out head as a scenario or the command line names it (no tensors).
struct HeadAblationSpec {
    int layer = 0;
    int head = 0;
    AblationMode mode = AblationMode::Zero;
    bool operator==(const HeadAblationSpec&) const = default;
};

struct HeadAblation {
    HeadAblationSpec spec;
    Tensor replacement; // [T, headDim] for AblationMode::Replace, [headDim] for CorpusMean
};

struct ResidualPatch {
    int layer = 0;    // the residual stream entering this layer (0: the embeddings' output)
    int position = 0; // the token whose row is replaced
    Tensor row;       // [1, hidden] or [hidden]
};

struct ResidualEdit {
    int layer = 0;     // the stream entering this layer; the layer count: before the final norm
    int64_t width = 0; // the row width `rows` reads and writes (the plan checks it)
    std::string name;  // what it is, for refusals: "the SAE edit at blocks.1.hook_resid_post"
    std::function<Tensor(const Tensor&)> rows; // [T, width] → [T, width], on the CPU
};

struct Intervention {
    std::vector<HeadAblation> heads;
    std::vector<ResidualPatch> residuals;
    std::vector<ResidualEdit> edits; // applied in order, after the patches of the same layer
    bool empty() const { return heads.empty() && residuals.empty() && edits.empty(); }
};

const char* ablationModeName(AblationMode mode);
std::optional<AblationMode> ablationModeFromName(const std::string& name);

// "L.H[:zero|mean|mean-corpus|replace],..." (layers and heads from 0; zero when no mode is given).
// Throws VariantError naming the bad entry.
std::vector<HeadAblationSpec> parseAblations(const std::string& text);
std::string ablationText(const std::vector<HeadAblationSpec>& ablations);

// The head ablations of `specs` with no replacement tensors (zero and mean). Throws VariantError
// for a replace or mean-corpus entry, which need another text's or a corpus's head outputs.
Intervention interventionOf(const std::vector<HeadAblationSpec>& specs);

// Edits the heads of `layer` that `intervention` names in context [T, heads · d] (heads
// concatenated, as the output projection reads them). `valid` [T] marks the unpadded positions.
void ablateHeads(Backend& backend, const Intervention& intervention, int layer, int heads,
                 std::span<const uint8_t> valid, DeviceTensor& context);
// The residual stream entering `layer` with the intervention's rows of that layer written in;
// `x` itself is left alone (a captured hidden state may share it). Returns x when none applies.
DeviceTensor patchResidual(Backend& backend, const Intervention& intervention, int layer,
                           const DeviceTensor& x);
// The residual stream at point `layer` (see ResidualEdit) after the intervention's edits there;
// `x` itself is left alone. Returns x when none applies.
DeviceTensor editResidual(Backend& backend, const Intervention& intervention, int layer,
                          const DeviceTensor& x);
} // namespace headlight::variants
