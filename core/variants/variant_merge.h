#pragma once
// A zoo checkpoint runs its own settings (the `headlight` section of its config.json) with the
// requested variant on top. The merge is generic: variantFields lists every field of VariantSpec
// through a structured binding, which stops compiling when a field is added until the field is
// listed here with how it merges, so a new option can never be silently dropped.
//
//   FieldMerge          how one field of the request combines with the checkpoint's
//   variantFields       every field of a spec, in declaration order, with its FieldMerge
//   requestOverCheckpoint  the merged spec

#include "variants/variant_spec.h"

#include <tuple>
#include <type_traits>

namespace headlight::variants {

enum class FieldMerge {
    // The attention kernel and its settings travel together: a requested kernel brings all of its
    // own (features, buckets, seed...), since the checkpoint's belong to its kernel.
    WithKernel,
    // The request's value wherever it differs from the vanilla default, else the checkpoint's.
    Requested,
    // Always the checkpoint's: the architecture describes how its trained weights are wired.
    Checkpoint,
};

template <typename T> struct SpecField {
    T& value;
    FieldMerge merge;
};

template <typename Spec> auto variantFields(Spec& spec) {
    static_assert(std::is_same_v<std::remove_const_t<Spec>, VariantSpec>);
    auto& [kernel, features, orthogonal, lshBuckets, lshRounds, lshChunk, sharedQk,
           probSparseFactor, projected, landmarks, pinvIterations, seed, mask, prior, span,
           talkingHeads, weightRule, position, dropFfn, earlyExit, recurrence, knn, block] = spec;
    const auto field = [](auto& value, FieldMerge merge) {
        return SpecField<std::remove_reference_t<decltype(value)>>{value, merge};
    };
    constexpr FieldMerge kernelSetting = FieldMerge::WithKernel;
    constexpr FieldMerge requested = FieldMerge::Requested;
    return std::tuple{field(kernel, kernelSetting),
                      field(features, kernelSetting),
                      field(orthogonal, kernelSetting),
                      field(lshBuckets, kernelSetting),
                      field(lshRounds, kernelSetting),
                      field(lshChunk, kernelSetting),
                      field(sharedQk, kernelSetting),
                      field(probSparseFactor, kernelSetting),
                      field(projected, kernelSetting),
                      field(landmarks, kernelSetting),
                      field(pinvIterations, kernelSetting),
                      field(seed, kernelSetting),
                      field(mask, requested),
                      field(prior, requested),
                      field(span, requested),
                      field(talkingHeads, requested),
                      field(weightRule, requested),
                      field(position, requested),
                      field(dropFfn, requested),
                      field(earlyExit, requested),
                      field(recurrence, requested),
                      field(knn, requested),
                      field(block, FieldMerge::Checkpoint)};
}

VariantSpec requestOverCheckpoint(const VariantSpec& checkpoint, const VariantSpec& request);
} // namespace headlight::variants
