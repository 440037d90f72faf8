#pragma once
// Item 8, the "prior" hook between layers (Lin et al. 2021, A Survey of Transformers, Eq. 22: Â_l = w₁·A_l + w₂·g(Â_{l−1})):
//   residual       RealFormer (He et al. 2020): Ŝ_l = S_l + Ŝ_{l−1}, Ŝ passed on pre-softmax
//   residual_mean  the running mean Ŝ_l = (S_l + l·Ŝ_{l−1}) / (l + 1) (RealFormer fn. 6, for deep)
//   share          Lazyformer (Ying et al. 2021): layers reuse the first layer's map of each group
//   gaussian       an additive local prior, built into the AttentionPlan's bias
// The stream carries unmasked scores: masks are applied afresh in every layer, so padding's
// large negative fill never accumulates.

#include "backend/backend.h"
#include "variants/composed_attention.h"

namespace headlight::variants {

// Applies the residual priors to this layer's raw scores [H, T, T] in place and records them for
// the next layer.
void applyScorePrior(Backend& backend, const Prior& prior, int layer, DeviceTensor& scores, AttentionMemory& memory);

// Lazyformer: whether this layer reuses the shared map instead of computing its own.
bool reusesSharedMap(const Prior& prior, int layer, const AttentionMemory& memory);
} // namespace headlight::variants
