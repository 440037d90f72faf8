#pragma once
// Scores read from the weights alone, as Elhage et al. 2021 ("A Mathematical Framework for
// Transformer Circuits") define them and TransformerLens computes them on a model loaded with
// its defaults (docs/head-roles.md, "Circuits"):
//   composition  ||W_OV^a · R^b||_F / (||W_OV^a||_F · ||R^b||_F) for head a of layer l1 and head
//                b of layer l2 > l1, with R^b = W_QK^b (Q), W_QK^bᵀ (K) or W_OV^b (V)
//                (HookedTransformer.all_composition_scores; 0 where l2 <= l1);
//   copying      Σ λ / Σ |λ| over the eigenvalues of the full OV circuit W_E W_OV W_U
//                (the positive-eigenvalue share, Elhage et al.; TransformerLens's
//                FactoredMatrix.eigenvalues, taken from the dh × dh matrix W_O W_U W_E W_V).
// Row-vector convention: W_Q, W_K, W_V are [D, dh] per head, W_O [dh, D], W_QK = W_Q W_Kᵀ,
// W_OV = W_V W_O. The weights are processed as HookedTransformer.from_pretrained does
// (fold_ln, center_writing_weights, center_unembed): a pre-norm block's norm gain is folded
// into the W_Q, W_K and W_V that read it, and with LayerNorm those are centred over D and W_O
// and W_E are centred over D; the final norm's gain is folded into W_U, which is centred over
// D (LayerNorm) and over the vocabulary. Post-norm models keep their weights as stored, but for
// W_U's centring over the vocabulary. Biases play no part.

#include "model/checkpoint_layout.h"
#include "model/model_spec.h"

#include <Eigen/Core>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace headlight::analysis {

enum class CompositionKind { Query, Key, Value };

// Every attention head's processed weights, layer by layer.
struct HeadCircuits {
    int layers = 0, heads = 0, kvHeads = 0, headDim = 0, hidden = 0;
    std::vector<Eigen::MatrixXf> query, key, value; // per layer [D, heads·dh] / [D, kvHeads·dh]
    std::vector<Eigen::MatrixXf> output;            // per layer [heads·dh, D]
    // W_U W_E [D, D] summed over the vocabulary (streamed, never [V, V]); empty when the model
    // has no linear unembedding, and then `copyingAbsence` says why in one line.
    Eigen::MatrixXd unembedTimesEmbed;
    std::string copyingAbsence;
};

// Throws std::invalid_argument when a layer has no per-head query, key, value and output maps.
HeadCircuits readHeadCircuits(const HostWeights& weights, const ModelSpec& spec);

// [layers·heads, layers·heads] row-major: (l1·H + h1, l2·H + h2). `progress(done, total)` is
// called after each layer pair.
std::vector<double> compositionScores(const HeadCircuits& circuits, CompositionKind kind,
                                      const std::function<void(int, int)>& progress = {});

// Per head, layer-major; empty when circuits.unembedTimesEmbed is.
std::vector<double> copyingScores(const HeadCircuits& circuits);
} // namespace headlight::analysis
