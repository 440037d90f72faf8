#pragma once
// Edits of an SAE's features inside the pass, at the SAE's hook, as SAELens's
// HookedSAETransformer makes them (sae_lens/saes/sae.py: SAE.forward, with the edit a hook on
// hook_sae_acts_post), with x the hook's activations [T, d_in]:
//   f  = encode(x);  f' = f with f'_i ← v_i for every clamp i=v (v = 0 zeroes the feature)
//   spliced with the error term   x' = decode(f') + (x − decode(f))   (use_error_term=True)
//   spliced without it            x' = decode(f')                    (use_error_term=False)
//   not spliced                   x' = x
//   then, for every steer j=α     x' += α · W_dec[j]  at every position
// A steer adds the raw decoder row, as SAELens's steering tutorials and Neuronpedia's additive
// steering do: no unit normalisation, and no undoing of the SAE's input normalisation (the row is
// in the SAE's space, which is the hook's own for normalize_activations none).

#include "analysis/sae_hook.h"
#include "analysis/sparse_autoencoder.h"
#include "variants/intervention.h"

#include <memory>
#include <string>
#include <vector>

namespace headlight::analysis {

enum class SaeSplice { None, WithError, NoError };

struct FeatureValue {
    int feature = 0;
    float value = 0.0f;
    bool operator==(const FeatureValue&) const = default;
};

struct SaeFeatureEdits {
    std::vector<FeatureValue> clamps; // f_i ← v
    std::vector<FeatureValue> steers; // x += α · W_dec[i]
    SaeSplice splice = SaeSplice::None;
    bool empty() const { return clamps.empty() && steers.empty() && splice == SaeSplice::None; }
    bool operator==(const SaeFeatureEdits&) const = default;
};

const char* saeSpliceName(SaeSplice splice); // "none", "with-error", "no-error"
// Throws std::invalid_argument naming the accepted words.
SaeSplice saeSpliceFromName(const std::string& name);

// "F=V" (a feature id from 0 and a finite value); `flag` names the option in the message of the
// std::invalid_argument thrown for anything else.
FeatureValue parseFeatureValue(const std::string& flag, const std::string& text);

// Throws std::invalid_argument for a feature id past the SAE's d_sae, or clamps without a splice.
void checkFeatureEdits(const SparseAutoencoder& sae, const SaeFeatureEdits& edits);

// x' of the formula above for the rows `x` [T, d_in].
Tensor editAtHook(const SparseAutoencoder& sae, const SaeFeatureEdits& edits, const Tensor& x);

// The residual stream, as the pass numbers it (the stream entering layer l; the model's layer
// count: the last block's output before the final norm), that the hook reads.
int residualStreamOfHook(const SaeHook& hook);

// The edits as the pass applies them at `hookName` (checked by checkFeatureEdits first).
variants::ResidualEdit saeResidualEdit(std::shared_ptr<const SparseAutoencoder> sae,
                                       const SaeFeatureEdits& edits, const SaeHook& hook,
                                       const std::string& hookName);
} // namespace headlight::analysis
