#pragma once
// The four normalisations a zoo checkpoint may be wired with (docs/zoo-format.md, norm.kind):
//   layer  LayerNorm  γ ⊙ (x − μ)/√(var + eps) + β                   (Ba et al. 2016)
//   rms    RMSNorm    γ ⊙ x/√(mean(x²) + eps)                        (Zhang & Sennrich 2019)
//   scale  ScaleNorm  g·x/√(‖x‖² + eps), one scalar g                (Nguyen & Salazar 2019)
//   ada    AdaNorm    C(1 − k·y) ⊙ y, y = (x − μ)/√(var + eps), k = 0.1, C = 1, no parameters
//                     (Xu et al. 2019)
// Hugging Face checkpoints use LayerNorm or RMSNorm.

#include "backend/backend.h"
#include "variants/variant_spec.h"

namespace headlight::variants {

// One norm's trained parameters: γ and β (β invalid for RMSNorm; both invalid for AdaNorm), or
// ScaleNorm's g.
struct NormWeights {
    DeviceTensor gamma, beta;
    float scale = 0.0f;
};

// What every norm of a model shares.
struct Normalization {
    BlockSpec::Norm kind = BlockSpec::Norm::Layer;
    float eps = 1e-5f;
    DeviceTensor ones, zeros; // [D]: AdaNorm's plain standardisation
};

void normalize(Backend& backend, const Normalization& normalization, const NormWeights& weights,
               const DeviceTensor& x, DeviceTensor& out);
} // namespace headlight::variants
