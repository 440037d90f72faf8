#include "variants/mixture_of_experts.h"

#include "variants/seeded_random.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace headlight::variants {
namespace {

struct Routed {
    std::vector<std::vector<int32_t>> tokens; // per expert
    std::vector<std::vector<float>> weights;  // per expert
    Tensor choice, weight;                    // [T, k]
};

Routed emptyRouting(int64_t tokens, int experts, int k) {
    return {std::vector<std::vector<int32_t>>(std::size_t(experts)),
            std::vector<std::vector<float>>(std::size_t(experts)), Tensor({tokens, k}),
            Tensor({tokens, k})};
}

void assign(Routed& routed, int64_t token, int slot, int k, int expert, float weight) {
    routed.tokens[std::size_t(expert)].push_back(int32_t(token));
    routed.weights[std::size_t(expert)].push_back(weight);
    routed.choice.values()[std::size_t(token * k + slot)] = float(expert);
    routed.weight.values()[std::size_t(token * k + slot)] = weight;
}

// One token's experts by descending gate, with their unnormalised gates and the gates' sum.
std::vector<int> gateOrder(const float* row, int64_t experts, std::vector<double>& p, double& sum) {
    const float top = *std::max_element(row, row + experts);
    p.assign(std::size_t(experts), 0.0);
    sum = 0.0;
    for (int64_t e = 0; e < experts; ++e)
        sum += p[std::size_t(e)] = std::exp(double(row[e] - top));
    std::vector<int> order(static_cast<std::size_t>(experts));
    for (int e = 0; e < int(experts); ++e)
        order[std::size_t(e)] = e;
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return p[std::size_t(a)] > p[std::size_t(b)]; });
    return order;
}

Routed routeBySoftmax(const Tensor& logits, const BlockSpec& block) {
    const int64_t tokens = logits.dim(0), experts = logits.dim(1);
    const bool switchRouting = block.routing == BlockSpec::Routing::Switch;
    const int k = switchRouting ? 1 : block.topK;
    Routed routed = emptyRouting(tokens, int(experts), k);
    std::vector<double> p;
    for (int64_t t = 0; t < tokens; ++t) {
        double sum = 0.0;
        const std::vector<int> order =
            gateOrder(logits.values().data() + t * experts, experts, p, sum);
        double chosen = 0.0;
        for (int i = 0; i < k; ++i)
            chosen += p[std::size_t(order[std::size_t(i)])];
        for (int i = 0; i < k; ++i) {
            const int e = order[std::size_t(i)];
            const double w = switchRouting ? p[std::size_t(e)] / sum : p[std::size_t(e)] / chosen;
            assign(routed, t, i, k, e, float(w));
        }
    }
    return routed;
}

Routed routeByHash(std::span<const int32_t> ids, int experts) {
    const int64_t tokens = int64_t(ids.size());
    Routed routed = emptyRouting(tokens, experts, 1);
    for (int64_t t = 0; t < tokens; ++t) {
        SeededRandom hash{uint64_t(uint32_t(ids[std::size_t(t)]))};
        assign(routed, t, 0, 1, int(hash.next() % uint64_t(experts)), 1.0f);
    }
    return routed;
}

Routed route(Backend& backend, const BlockSpec& block, const ExpertLayer& layer,
             std::span<const int32_t> ids, const DeviceTensor& x,
             std::map<std::string, Tensor>* internals) {
    if (block.routing == BlockSpec::Routing::Hash) return routeByHash(ids, layer.experts);
    DeviceTensor logits = backend.allocate({x.dim(0), layer.experts});
    backend.linear(x, layer.router, nullptr, logits);
    const Tensor hostLogits = backend.download(logits);
    if (internals) (*internals)["router_logits"] = hostLogits;
    return routeBySoftmax(hostLogits, block);
}
} // namespace

DeviceTensor mixtureOfExperts(Backend& backend, const BlockSpec& block, const ExpertLayer& layer,
                              std::span<const int32_t> ids, const DeviceTensor& x,
                              const ExpertFunction& expert,
                              std::map<std::string, Tensor>* internals) {
    const Routed routed = route(backend, block, layer, ids, x, internals);
    if (internals) {
        (*internals)["expert_choice"] = routed.choice;
        (*internals)["expert_weight"] = routed.weight;
    }
    DeviceTensor out = backend.allocate(x.shape());
    backend.map(x, MapOp::Affine, 0.0f, 0.0f, out);
    for (int e = 0; e < layer.experts; ++e) {
        const auto& rows = routed.tokens[std::size_t(e)];
        if (rows.empty()) continue;
        DeviceTensor gathered = backend.allocate({int64_t(rows.size()), x.dim(1)});
        backend.gatherRows(x, rows, gathered);
        backend.scatterAddRows(expert(e, gathered), rows, routed.weights[std::size_t(e)], out);
    }
    return out;
}
} // namespace headlight::variants
