#pragma once
// Row helpers of the approximate attention kernels (lsh_attention.cpp, linearized_attention.cpp,
// probsparse_attention.cpp): a gather of table rows and the grouped-query repeat of kv heads.

#include "backend/backend.h"

#include <cstdint>
#include <vector>

namespace headlight::variants {

// Rows `ids` of table [R, N], shaped `shape`.
inline DeviceTensor gathered(Backend& backend, const DeviceTensor& table,
                             const std::vector<int32_t>& ids, std::vector<int64_t> shape) {
    DeviceTensor rows = backend.allocate({int64_t(ids.size()), table.shape().back()});
    backend.gatherRows(table, ids, rows);
    return rows.reshaped(std::move(shape));
}

// x [Hkv, T, n] repeated to [H, T, n] (grouped-query heads read their kv head).
inline DeviceTensor perQueryHead(Backend& backend, const DeviceTensor& x, int64_t heads) {
    const int64_t kvHeads = x.dim(0), rows = x.dim(1);
    if (kvHeads == heads) return x;
    DeviceTensor out = backend.allocate({heads, rows, x.dim(2)});
    const DeviceTensor flat = x.reshaped({kvHeads * rows, x.dim(2)});
    DeviceTensor outFlat = out.reshaped({heads * rows, x.dim(2)});
    for (int64_t h = 0; h < heads; ++h)
        backend.copyRows(flat, (h / (heads / kvHeads)) * rows, rows, outFlat, h * rows);
    return out;
}
} // namespace headlight::variants
