#pragma once
// The attention atlas (analysis/attention_atlas.h) for a variant's kernel: the weights a sparse
// mask, Reformer LSH or a linearized kernel gives one layer, rebuilt from the layer's queries and
// keys and the kernel's own rule, never a T × T matrix. The rule comes from the kernel's own code
// (variants::planAttention's rows of keys, variants::lshPairs, variants::linearizedFeatures) run
// on the CPU with the pass's seed, so the atlas draws what the kernel computed:
//   rows of keys (sparse masks, LSH): a_ij = m_ij·e^{s_ij} / Σ_k m_ik·e^{s_ik}, s = scale·q·k,
//     m_ij the times key j is listed for query i (LSH rounds); a sparse mask's query with no key
//     is reported uniform, as the kernel reports it;
//   linearized: a_ij = φ(q_i)·φ(k_j)·[j allowed] / (Σ_allowed φ(q_i)·φ(k) + ε).
// Memory: O(E) for E listed pairs, O(T·f) for the feature maps.

#include "analysis/attention_atlas.h"
#include "backend/backend.h"
#include "variants/variant_spec.h"

#include <optional>
#include <string>

namespace headlight::analysis {

struct AtlasVariant {
    std::string name;   // the option as a caption names it: "mask longformer", "lsh", "favor", …
    float scale = 1.0f; // what the composed path multiplies q·k by
    // The composed path's masking rule: its window applies to every layer.
    bool causal = false;
    int slidingWindow = 0;
    std::optional<SparsePattern> pattern; // rows of keys (sparse masks, LSH)
    bool uniformEmptyRows = false;        // a sparse mask's query with no key reads 1/T
    Tensor sharedKeys;                    // LSH with shared QK: the keys scores read, [H·T, d]
    Tensor queryFeatures, keyFeatures;    // linearized: φ(Q) [H, T, f], φ(K) [Hkv, T, f]
    float eps = 0.0f;
    std::optional<variants::SparseMask> nominalMask; // the mask the variant names, if any
};

// Whether the atlas of a pass run with `requested` (merged over a zoo checkpoint's own settings,
// as the model does) draws a variant kernel's own weights (a sparse mask, LSH, a linearized
// kernel) rather than the attention the fused kernel runs. Builds none of the kernel's rule; a
// variant the atlas cannot rebuild throws VariantError with variants::atlasRefusal's reason.
bool atlasDrawsVariant(const ModelSpec& spec, const variants::VariantSpec& requested);

// atlasInputOf for a pass run with `requested` (merged over a zoo checkpoint's own settings, as
// the model does). Attention the fused kernel runs gives the plain input; a variant the atlas
// cannot rebuild throws VariantError with variants::atlasRefusal's reason.
AtlasInput atlasInputOf(const LayerTrace& layer, const ModelSpec& spec,
                        std::vector<uint8_t> keyValid, const variants::VariantSpec& requested,
                        int layerIndex);

// One head's weights under the variant for queries [q0, q1) × keys [k0, k1): [q1 − q0, k1 − k0].
// `normalisers` holds each query's normaliser, indexed by query: the log-sum-exp over its keys,
// or the linearized Σ + ε.
RowMatrix variantHeadRows(const AtlasInput& input, int head, int64_t q0, int64_t q1, int64_t k0,
                          int64_t k1, const std::vector<float>& normalisers);
// The same, first computing the normalisers of queries [q0, q1) into `normalisers`: the keys
// must be all of them (k0 = 0, k1 = T).
RowMatrix variantHeadRowsRecording(const AtlasInput& input, int head, int64_t q0, int64_t q1,
                                   int64_t k0, int64_t k1, std::vector<float>& normalisers);
} // namespace headlight::analysis
