#pragma once
// Item 16, early exit: a token stops at the first layer whose criterion passes and its state is
// copied upward unchanged, so later tokens still attend to it (CALM's state propagation).
//   entropy           DeeBERT (Xin et al. 2020): H(softmax(logits_l)) < threshold (nats)
//   patience          PABEE (Zhou et al. 2020): argmax unchanged for `patience` consecutive layers
//   softmax_response  CALM (Schuster et al. 2022): top-1 probability ≥ threshold
//   saturation        CALM: cos(h_l, h_{l−1}) ≥ threshold (needs no LM head)
// The logit criteria read each layer through the model's own tied LM head (final norm, then the
// token embedding transposed), which trained only the last layer: INF-APPROX.

#include <cstdint>
#include <span>
#include <vector>

#include "tensor/tensor.h"
#include "variants/variant_spec.h"

namespace headlight::variants {

// What one layer's state says about each token: the criterion's value and the top token.
struct LayerSignal {
    std::vector<float> value;   // [T]
    std::vector<int32_t> top;   // [T] argmax of the logits (logit criteria only)
};

LayerSignal logitSignal(const EarlyExit& exit, const Tensor& logits); // logits [T, V]
LayerSignal saturationSignal(const Tensor& previous, const Tensor& current); // states [T, D]

class ExitTracker {
public:
    ExitTracker(const EarlyExit& exit, int64_t tokens, int layers);
    // Records layer `layer`'s signal; returns the tokens that exit after it.
    std::vector<int64_t> update(int layer, const LayerSignal& signal);
    bool exited(int64_t token) const { return exitLayer_[std::size_t(token)] > 0; }
    const EarlyExit& rule() const { return exit_; }
    // exit_layer [T] (layers run, 1..L), exit_signal [L, T], exit_prediction [T] (logit criteria)
    Tensor exitLayers() const;
    Tensor signals() const;
    Tensor predictions() const;

private:
    bool passes(int64_t token, const LayerSignal& signal);

    EarlyExit exit_;
    int layers_;
    std::vector<int> exitLayer_, streak_;
    std::vector<int32_t> lastTop_, prediction_;
    std::vector<float> signals_; // [L, T]
};
} // namespace headlight::variants
