#pragma once
// The one composable attention path (docs/variants.md, "The order of operations"). For the exact
// softmax kernel:
//
//   S = scale·QKᵀ  (+ prior: RealFormer residual / running mean)      → residual stream, next layer
//     + bias (ALiBi, Gaussian prior)  → talking-heads mix P_l  → mask → softmax (or the
//     attention rule: softmax with a sink, sigmoid)
//     → adaptive-span ramp ⊙, renormalised  → talking-heads mix P_w  → (Lazyformer: reuse)  → ·V
//
// The approximate kernels (LSH, linearized, ProbSparse, Linformer, Nyström) replace the middle and
// hand back the same outputs, with their effective T × T attention materialised only when asked.

#include "backend/backend.h"
#include "variants/attention_plan.h"
#include "variants/variant_spec.h"

#include <map>
#include <string>

namespace headlight::variants {

// One layer's attention inputs, split per head: q [H, T, d], k and v [Hkv, T, d].
struct LayerAttention {
    DeviceTensor q, k, v;
    int layer = 0;
    float scale = 1.0f;
    const Tensor* keyProjection = nullptr;   // Linformer's learned E [k, P] (zoo), else pooling
    const Tensor* valueProjection = nullptr; // Linformer's learned F [k, P]
};

// What the attention of one layer passes on to the next within a forward pass.
struct AttentionMemory {
    DeviceTensor residualScores; // RealFormer: the previous layer's pre-softmax scores (unmasked)
    DeviceTensor sharedProbabilities; // Lazyformer: the probabilities of the group's first layer
};

// What a caller wants back besides the context.
struct AttentionWants {
    bool scores = false, probabilities = false, internals = false;
};

struct AttentionOutputs {
    DeviceTensor context; // [H, T, d]
    DeviceTensor scores;  // [H, T, T] pre-softmax, masked entries at the lowest f32 (when wanted)
    DeviceTensor probabilities; // [H, T, T] the (effective) attention weights used (when wanted)
    std::map<std::string, DeviceTensor> internals; // variant internals by name (docs/variants.md)
};

AttentionOutputs attendComposed(Backend& backend, const LayerAttention& layer,
                                const VariantSpec& spec, const AttentionPlan& plan,
                                AttentionMemory& memory, const AttentionWants& wants);

// Kernels other than exact softmax (one file each, named after the variant).
// The pairs Reformer LSH attends, as rows of keys (pattern.heads = H): each query's keys over
// every round, a key attended in r rounds listed r times (a round in which the query fell back
// on its own key counts only when every round did: the kernel weighs it exp(−1e5) beside the
// others, so it drops out of the identity below). The kernel's combined weights are the
// softmax of scale·q_i·key_j over that multiset, since weighting round r by e^{lse_r} / Σ e^{lse}
// turns Σ_r w_r·p_r(j) into Σ_r [j ∈ A_r] e^{s_ij} / Σ_r Σ_{A_r} e^{s}. The keys the scores read
// are the normalised queries, sharedKeys [H·T, d], with shared QK, else the layer's keys.
struct LshPairs {
    SparsePattern pattern;
    Tensor sharedKeys;
};
LshPairs lshPairs(Backend&, const LayerAttention&, const VariantSpec&, const AttentionPlan&);
AttentionOutputs lshAttention(Backend&, const LayerAttention&, const VariantSpec&,
                              const AttentionPlan&, const AttentionWants&);
// A linearized kernel's feature maps as linearizedAttention reads them: φ(Q) [H, T, f], φ(K)
// [Hkv, T, f] with padding keys at 0, the random features W [m, d] (empty for elu + 1), and the ε
// each query's normaliser φ(q)·Σφ(k) gets. The implied weight of key j for query i is
// φ(q_i)·φ(k_j) / (Σ_allowed φ(q_i)·φ(k) + ε) (the attention atlas reads it from these).
struct LinearizedFeatures {
    DeviceTensor q, k;
    Tensor features;
    float eps = 0.0f;
};
LinearizedFeatures linearizedFeatures(Backend&, const LayerAttention&, const VariantSpec&,
                                      const AttentionPlan&);
AttentionOutputs linearizedAttention(Backend&, const LayerAttention&, const VariantSpec&,
                                     const AttentionPlan&, const AttentionWants&);
AttentionOutputs probSparseAttention(Backend&, const LayerAttention&, const VariantSpec&,
                                     const AttentionPlan&, const AttentionWants&);
AttentionOutputs compressedAttention(Backend&, const LayerAttention&, const VariantSpec&,
                                     const AttentionPlan&, const AttentionWants&);
AttentionOutputs nystromAttention(Backend&, const LayerAttention&, const VariantSpec&,
                                  const AttentionPlan&, const AttentionWants&);
} // namespace headlight::variants
