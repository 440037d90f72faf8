#include "variants/talking_heads.h"

#include "variants/variant_spec.h"

namespace headlight::variants {

void mixHeads(Backend& backend, const std::vector<float>& mix, DeviceTensor& x) {
    const int64_t heads = x.dim(0), plane = x.size() / heads;
    if (int64_t(mix.size()) != heads * heads)
        throw VariantError("talking heads: the mixing matrix is " + std::to_string(mix.size()) +
                           " numbers; this model needs " + std::to_string(heads) + " × " + std::to_string(heads));
    const DeviceTensor matrix = backend.upload(Tensor({heads, heads}, mix));
    DeviceTensor mixed = backend.allocate(x.shape());
    DeviceTensor flatMixed = mixed.reshaped({heads, plane});
    backend.matmul(matrix, x.reshaped({heads, plane}), false, 1.0f, flatMixed);
    x = mixed;
}
} // namespace headlight::variants
