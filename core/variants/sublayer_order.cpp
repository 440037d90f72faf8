#include "variants/sublayer_order.h"

#include <algorithm>

namespace headlight::variants {
namespace {

std::vector<Sublayer> sandwichOrder(int k, int layers, bool ffn) {
    std::vector<SublayerKind> kinds(std::size_t(k), SublayerKind::Attention);
    for (int i = 0; i < layers - k; ++i)
        kinds.insert(kinds.end(), {SublayerKind::Attention, SublayerKind::Ffn});
    kinds.insert(kinds.end(), std::size_t(k), SublayerKind::Ffn);
    std::vector<Sublayer> order;
    int attention = 0, feedForward = 0;
    for (std::size_t i = 0; i < kinds.size(); ++i) {
        const bool isAttention = kinds[i] == SublayerKind::Attention;
        if (!isAttention && !ffn) continue;
        order.push_back(
            {kinds[i], isAttention ? attention++ : feedForward++, ffn ? i % 2 == 1 : true});
    }
    return order;
}
} // namespace

std::vector<Sublayer> sublayerOrder(const BlockSpec& block, int layers, bool dropFfn) {
    const bool ffn = !dropFfn;
    if (block.order == BlockSpec::Order::Sandwich)
        return sandwichOrder(std::min(block.sandwich, layers), layers, ffn);
    std::vector<Sublayer> order;
    for (int l = 0; l < layers; ++l) {
        if (block.order == BlockSpec::Order::Macaron && ffn)
            order.push_back({SublayerKind::FfnPre, l, false});
        order.push_back({SublayerKind::Attention, l, !ffn});
        if (ffn) order.push_back({SublayerKind::Ffn, l, true});
    }
    return order;
}

void scaleFfnStep(Backend& backend, const BlockSpec& block, DeviceTensor& y) {
    if (block.order == BlockSpec::Order::Macaron) backend.map(y, MapOp::Affine, 0.5f, 0.0f, y);
}
} // namespace headlight::variants
