#pragma once
// Attention sinks and massive activations on one text (docs/sinks.md): per layer the largest
// residual-stream activations against the median (analysis/massive_activations.h), each head's
// share of attention on the first token (the head-roles sink score), and what happens to the
// output and to those shares when the sink is taken away, in three ways, each against the clean
// pass:
//   zero-massive   the largest activations of the layer where they arise are set to 0 in the
//                  residual stream leaving that layer (a variants::ResidualEdit; Sun et al. 2024
//                  set massive activations to zero the same way);
//   drop-first     the text without its first token (Xiao et al. 2023 evict the initial
//                  tokens): clean positions 1..T−1 are compared with 0..T−2;
//   rule           the attention rule switched to each of the other two of softmax, softmax with
//                  a zero sink logit (Miller 2023) and sigmoid attention (Ramapuram et al. 2024).

#include "analysis/massive_activations.h"
#include "model/pass_control.h"
#include "model/transformer.h"

#include <string>
#include <vector>

namespace headlight::analysis {

struct SinkAblation {
    std::string id;      // "zero-massive", "drop-first", "softmax", "sink-softmax", "sigmoid"
    std::string label;   // what was done, in words
    std::string refusal; // why it could not run on this model and variant; else empty
    int positions = 0;   // the positions compared
    double meanKl = 0.0; // mean KL(p_clean ‖ p_ablated) in nats over them (with an LM head)
    int top1Changes = 0; // of them, where the top-1 token changed
    std::vector<double> sinkShare; // [L · H] each head's share on the (new) first token
};

struct SinkReport {
    int layers = 0, heads = 0, tokens = 0;
    std::vector<LargestActivations> activations; // [L] the stream leaving each layer, before
                                                 // any final norm
    std::vector<double> sinkShare;               // [L · H] clean
    int ariseLayer = 0;                          // layerWhereLargestArise
    bool hasOutput = false;                      // KL and top-1 need an LM head
    std::string outputAbsence;                   // why not, when not
    std::vector<SinkAblation> ablations;         // zero-massive, drop-first, then the two rules
};

// Runs the clean pass and the four ablated ones. `top` activations are kept per layer (and
// zeroed by zero-massive). Throws std::invalid_argument for fewer than 2 tokens or a top below
// 1, ModelError for a depth that depends on the input (ACT, early exit) or maps that are not
// token by token, and whatever the clean pass throws.
SinkReport sinkReport(const TransformerModel& model, const ModelInput& input,
                      const variants::VariantSpec& variant, int top,
                      const PassControl& control = {});

// The mean of per-head shares (0 for none): the one number the table and the view give.
double meanShare(const std::vector<double>& shares);

// The zero-massive edit: the listed entries of the stream entering `layer` set to 0.
variants::ResidualEdit zeroActivations(const std::vector<Activation>& entries, int layer,
                                       int64_t width);
} // namespace headlight::analysis
