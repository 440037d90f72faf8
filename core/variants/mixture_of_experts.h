#pragma once
// Mixture of experts (docs/zoo-format.md, ffn.experts): each token's chosen experts e run on it
// and their outputs are summed with the routing weights, y_t = Σ_e w_te · FFN_e(x_t).
//   top_k   softmax gates p = softmax(W_r x_t), the k largest renormalised to sum 1 (GShard,
//           Lepikhin et al. 2021)
//   switch  the top gate alone, weighted by its probability (Fedus et al. 2021)
//   hash    expert = SplitMix64(token id) mod E, weight 1, no router (Roller et al. 2021)
// No capacity limit, so no token is dropped at inference.

#include "backend/backend.h"
#include "tensor/tensor.h"
#include "variants/variant_spec.h"

#include <functional>
#include <map>
#include <span>
#include <string>

namespace headlight::variants {

// FFN_e on the rows [n, D] routed to expert e.
using ExpertFunction = std::function<DeviceTensor(int expert, const DeviceTensor& rows)>;

struct ExpertLayer {
    int experts = 0;
    DeviceTensor router; // W_r [E, D]; invalid under hash routing
};

// x [T, D] → [T, D]. With `internals`, adds router_logits [T, E] (softmax routings),
// expert_choice and expert_weight [T, k].
DeviceTensor mixtureOfExperts(Backend& backend, const BlockSpec& block, const ExpertLayer& layer,
                              std::span<const int32_t> ids, const DeviceTensor& x,
                              const ExpertFunction& expert,
                              std::map<std::string, Tensor>* internals);
} // namespace headlight::variants
