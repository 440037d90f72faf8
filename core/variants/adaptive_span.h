#pragma once
// Item 9, adaptive attention span (Sukhbaatar et al. 2019a; docs/variants.md, option 9): each head h multiplies
// its weights by the soft mask m_z(x) = clamp((R + z_h − x) / R, 0, 1) of the distance x = i − j
// (|i − j| for an encoder) and renormalises: a_ij = m_z(x) e^{s_ij} / Σ_r m_z(x_r) e^{s_ir}.

#include <cstdint>

#include "tensor/tensor.h"
#include "variants/variant_spec.h"

namespace headlight::variants {

float spanRamp(float distance, float span, float ramp);
// m_z for every head and pair: [H, T, T]; z cycles through span.spans.
Tensor spanMask(const AdaptiveSpan& span, int heads, int64_t tokens);
} // namespace headlight::variants
