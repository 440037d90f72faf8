#pragma once
// Whether a checkpoint can run a variant. Each option declares what it needs (docs/variants.md, "What an option needs from a checkpoint":
// exact, approximate, toggle, or trained weights); the engine refuses, with the reason, what
// cannot work rather than showing a figure that means nothing.

#include "model/model_spec.h"
#include "variants/variant_spec.h"

namespace headlight::variants {

// Throws VariantError with a one-line reason naming the option and what it needs.
void checkApplies(const VariantSpec& variant, const ModelSpec& model);

// A zoo checkpoint's funnel (BlockSpec::funnelBlocks): throws VariantError unless the blocks add
// up to the model's layers and every other option works on pooled, non-square attention maps.
void checkFunnel(const VariantSpec& variant, const ModelSpec& model);
} // namespace headlight::variants
