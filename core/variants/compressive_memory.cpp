#include "variants/compressive_memory.h"

#include <algorithm>

namespace headlight::variants {

DeviceTensor stackRows(Backend& backend, std::initializer_list<DeviceTensor> parts) {
    int64_t rows = 0;
    for (const DeviceTensor& part : parts)
        rows += rowsOf(part);
    DeviceTensor stacked = backend.allocate({rows, std::data(parts)[parts.size() - 1].dim(1)});
    int64_t at = 0;
    for (const DeviceTensor& part : parts) {
        if (!part.valid()) continue;
        backend.copyRows(part, 0, part.dim(0), stacked, at);
        at += part.dim(0);
    }
    return stacked;
}

// The pooling is a [slots, leaving] matmul, so every backend runs it.
void remember(Backend& backend, SegmentMemory& memory, const DeviceTensor& x,
              const Recurrence& shape) {
    const int64_t width = x.dim(1), total = rowsOf(memory.recent) + x.dim(0);
    const int64_t leaving = std::max<int64_t>(0, total - shape.memory);
    const DeviceTensor all = stackRows(backend, {memory.recent, x});
    if (shape.memory > 0) {
        memory.recent = backend.allocate({total - leaving, width});
        backend.copyRows(all, leaving, total - leaving, memory.recent, 0);
    }
    if (shape.compressed == 0 || leaving == 0) return;
    const int64_t slots = leaving / shape.rate;
    Tensor pool({slots, leaving});
    for (int64_t s = 0; s < slots; ++s)
        for (int64_t r = 0; r < shape.rate; ++r)
            pool.values()[std::size_t(s * leaving + s * shape.rate + r)] = 1.0f / float(shape.rate);
    DeviceTensor old = backend.allocate({leaving, width}),
                 pooled = backend.allocate({slots, width});
    backend.copyRows(all, 0, leaving, old, 0);
    backend.matmul(backend.upload(pool), old, false, 1.0f, pooled);
    const DeviceTensor joined = stackRows(backend, {memory.compressed, pooled});
    const int64_t kept = std::min<int64_t>(joined.dim(0), shape.compressed);
    memory.compressed = backend.allocate({kept, width});
    backend.copyRows(joined, joined.dim(0) - kept, kept, memory.compressed, 0);
}
} // namespace headlight::variants
