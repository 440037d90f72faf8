#pragma once
// A sparse autoencoder (SAE) as SAELens computes it at inference (sae_lens/saes/*.py, 6.x):
//   x' = normalise(x) - b_dec·[apply_b_dec_to_input]
//   standard: f = ReLU(x'·W_enc + b_enc)
//   jumprelu: f = ReLU(p)·[p > threshold], p = x'·W_enc + b_enc (strictly greater)
//   topk:     p = x'·W_enc + b_enc (times ‖W_dec row‖ with rescale_acts_by_decoder_norm); the k
//             largest p of each token kept and passed through ReLU, the others 0
//   gated:    f = [x'·W_enc + b_gate > 0] · ReLU(x'·(W_enc ∘ exp r_mag) + b_mag)
//   x̂ = denormalise(f·W_dec + b_dec) (f / ‖W_dec row‖ first with the topk rescale)
// Normalisation: constant_norm_rescale scales each token to norm √d_in (and back), layer_norm
// centres it and divides by its unbiased standard deviation + 1e-5 (and back, without the eps),
// expected_average_only_in multiplies by a stored factor (and divides after), which SAELens folds
// into the weights. Encoding runs on the CPU in f32 (Eigen), whatever backend ran the pass.

#include "tensor/tensor.h"

#include <optional>
#include <string>

namespace headlight::analysis {

enum class SaeArchitecture { Standard, JumpRelu, TopK, Gated };
enum class SaeNormalization { None, ConstantNormRescale, LayerNorm, ExpectedAverageOnlyIn };

const char* saeArchitectureName(SaeArchitecture architecture); // as SAELens spells it
const char* saeNormalizationName(SaeNormalization normalization);

struct SparseAutoencoder {
    SaeArchitecture architecture = SaeArchitecture::Standard;
    int dIn = 0;
    int dSae = 0;
    bool applyBDecToInput = true;
    SaeNormalization normalization = SaeNormalization::None;
    // expected_average_only_in's factor; without one the input is used as it is (as SAELens's
    // load_from_disk does), which the reader reports.
    std::optional<double> scalingFactor;
    int k = 0;                         // topk only
    bool rescaleByDecoderNorm = false; // topk only
    Tensor wEnc;                       // [d_in, d_sae]
    Tensor wDec;                       // [d_sae, d_in]
    Tensor bEnc;                       // [d_sae]; empty for gated
    Tensor bDec;                       // [d_in]
    Tensor threshold;                  // [d_sae], jumprelu only
    Tensor bGate;                      // [d_sae], gated only
    Tensor rMag;                       // [d_sae], gated only
    Tensor bMag;                       // [d_sae], gated only
    Tensor wSkip; // [d_in, d_in]: a transcoder's affine skip, x̂ += x·W_skip (x as given); or empty
};

struct SaeEncoding {
    Tensor input;    // [T, d_in]: the hook's activations, as given (SAELens's hook_sae_input)
    Tensor features; // [T, d_sae]: the feature activations (hook_sae_acts_post)
    Tensor output;   // [T, d_in]: the reconstruction, denormalised (the SAE's forward)
    // What the output reconstructs, [T, d_in]: a transcoder's target (the activations at its
    // output hook, set by the caller); empty for an SAE, which reconstructs `input`.
    Tensor target;
};

// Encodes and decodes every row of `activations` [T, d_in]; throws std::invalid_argument when the
// width is not d_in.
SaeEncoding encodeAndDecode(const SparseAutoencoder& sae, const Tensor& activations);

// The reconstruction of `features` [T, d_sae] (the encoding's, edited), denormalised as the
// encoding's rows were normalised: SAELens's decode after the encode of the same activations.
// Throws std::invalid_argument for another shape.
Tensor decodeFeatures(const SparseAutoencoder& sae, const SaeEncoding& encoding,
                      const Tensor& features);

// The quality against `target` where set, else against `input`.
struct ReconstructionQuality {
    // 1 - Σ‖x - x̂‖² / Σ‖x - x̄‖², x̄ the mean row of the text (NaN for a single row, whose
    // variance is 0)
    double varianceExplained = 0.0;
    double meanSquaredError = 0.0; // mean over rows and columns of (x - x̂)²
    double meanL0 = 0.0;           // features above 0 per row, averaged
};
ReconstructionQuality reconstructionQuality(const SaeEncoding& encoding);
} // namespace headlight::analysis
