#pragma once
// Which composed attention (docs/variants.md, "The order of operations") the attention atlas
// (core/analysis/atlas_variant.h) rebuilds from a layer's queries and keys alone: softmax over a
// sparse mask's rows of keys, Reformer LSH, and the linearized kernels, each on its own. The
// other options mix layers (priors), heads (talking heads), add T × T terms (ALiBi, T5 buckets,
// the Gaussian prior, adaptive span) or pool keys or queries (Linformer, memory-compressed,
// Nyström, ProbSparse), so their weights are not a function of one layer's Q and K and a rule;
// the sink softmax and sigmoid rules change the atlas's exact softmax rows themselves.

#include "variants/variant_spec.h"

#include <string>

namespace headlight::variants {

// "" when the atlas can rebuild the attention of `effective` (the request merged over the
// checkpoint's own settings), else a one-line reason naming the option.
std::string atlasRefusal(const VariantSpec& effective);
} // namespace headlight::variants
