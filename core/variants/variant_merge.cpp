#include "variants/variant_merge.h"

#include <utility>

namespace headlight::variants {
namespace {

template <typename T>
void mergeField(SpecField<T> merged, SpecField<const T> requested, SpecField<const T> vanilla,
                bool kernelRequested) {
    switch (merged.merge) {
    case FieldMerge::WithKernel:
        if (kernelRequested) merged.value = requested.value;
        break;
    case FieldMerge::Requested:
        if (!(requested.value == vanilla.value)) merged.value = requested.value;
        break;
    case FieldMerge::Checkpoint:
        break;
    }
}
} // namespace

VariantSpec requestOverCheckpoint(const VariantSpec& checkpoint, const VariantSpec& request) {
    VariantSpec merged = checkpoint;
    const VariantSpec vanilla;
    const bool kernelRequested = request.kernel != vanilla.kernel;
    const auto into = variantFields(merged);
    const auto from = variantFields(request);
    const auto defaults = variantFields(vanilla);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (mergeField(std::get<I>(into), std::get<I>(from), std::get<I>(defaults), kernelRequested),
         ...);
    }
    (std::make_index_sequence<std::tuple_size_v<decltype(into)>>{});
    return merged;
}
} // namespace headlight::variants
