#pragma once
// Item 2, the sparse-mask composer: named sparse-attention models as unions of atomic patterns
// (Lin et al. 2021, A Survey of Transformers, §4.1.1, Fig. 4–5), built into the nominal mask a view shows and the softmax obeys.
//
//   star          band 1 + global token 0 (Star-Transformer, Guo et al. 2019a: ring + relay)
//   longformer    band w (dilated by d) + global tokens (Beltagy et al. 2020)
//   bigbird       block window ±1 block + r random blocks + global tokens (Zaheer et al. 2020)
//   sparse_strided band l − 1 + stride l (Sparse Transformer, Child et al. 2019)
//   sparse_fixed  block l + the last c columns of every block (Sparse Transformer "fixed")
//   image_local   query block b sees its block and m tokens before it (Parmar et al. 2018, 1D)
//   blockwise     block-diagonal with blocks of b (Qiu et al. 2019)
//   multiscale    band per head with windows w_h (Multi-Scale Transformer, Guo et al. 2020)

#include "backend/backend.h"
#include "tensor/tensor.h"
#include "variants/variant_spec.h"

#include <functional>
#include <string>
#include <vector>

namespace headlight::variants {

struct PresetOptions {
    int window = 2, dilation = 1, block = 4, random = 1, stride = 4, summary = 1, memory = 4;
    std::vector<int> global{0};
    std::vector<int> windows{1, 2, 4, 8};
};

// The parts of a named preset; throws VariantError for an unknown name, listing the known ones.
std::vector<MaskPart> presetParts(const std::string& preset, const PresetOptions& options);
const std::vector<std::string>& presetNames();

// The nominal mask [Hm, T, T] (1 = allowed), Hm = heads when a part differs per head, else 1.
// Causality and padding are not included; the attention applies them on top.
Tensor buildSparseMask(const SparseMask& mask, int64_t tokens, int heads);

// The same pattern as rows of keys (backend.h's SparsePattern) with no T × T matrix, for sparse
// attention at long T; `keep(i, j)` drops what the attention forbids on top of the pattern
// (causality, a sliding window, padding). O(Hp·T²) time, O(E) memory.
using KeepPair = std::function<bool(int64_t query, int64_t key)>;
SparsePattern buildSparsePattern(const SparseMask& mask, int64_t tokens, int heads,
                                 const KeepPair& keep);
} // namespace headlight::variants
