#include "variants/atlas_attention.h"

namespace headlight::variants {
namespace {

// The option that keeps the atlas from rebuilding the weights, or "" for none.
std::string blockingOption(const VariantSpec& v) {
    if (v.prior.kind != Prior::Kind::None)
        return "an attention prior (RealFormer, Lazyformer, Gaussian)";
    if (v.span.enabled) return "adaptive attention span";
    if (v.talkingHeads.enabled) return "talking-heads attention";
    if (v.weightRule.kind != WeightRule::Kind::Softmax)
        return "an attention rule other than softmax (sink softmax, sigmoid)";
    if (v.position == PositionKind::Alibi) return "ALiBi";
    if (v.position == PositionKind::T5) return "T5 relative position buckets";
    switch (v.kernel) {
    case AttentionKernel::ProbSparse:
        return "Informer ProbSparse attention";
    case AttentionKernel::Linformer:
        return "Linformer";
    case AttentionKernel::MemoryCompressed:
        return "memory-compressed attention";
    case AttentionKernel::Nystrom:
        return "Nyströmformer";
    case AttentionKernel::Softmax:
    case AttentionKernel::Lsh:
    case AttentionKernel::Favor:
    case AttentionKernel::Rfa:
    case AttentionKernel::LinearElu:
        break;
    }
    if (v.mask && v.kernel != AttentionKernel::Softmax)
        return "a sparse mask together with another attention kernel";
    return "";
}
} // namespace

std::string atlasRefusal(const VariantSpec& effective) {
    const std::string option = blockingOption(effective);
    if (option.empty()) return "";
    return "the atlas rebuilds attention from each layer's queries and keys, and " + option +
           " changes it in a way they do not give (sparse masks, LSH and linearized kernels "
           "work): turn it off, or use the attention view on a shorter text";
}
} // namespace headlight::variants
