#pragma once
// The memory of one Transformer-XL attention sub-layer (Dai et al. 2019), with the Compressive
// Transformer's compressed memory (Rae et al. 2020): each segment's inputs are appended to the
// memory, which keeps its last `memory` rows; the rows leaving it are mean-pooled `rate` at a time
//
//   c_s = (1/rate) · Σ_{r<rate} m_{s·rate + r}
//
// into the compressed memory, which keeps its last `compressed` slots.

#include "backend/backend.h"
#include "variants/variant_spec.h"

#include <initializer_list>

namespace headlight::variants {

struct SegmentMemory {
    DeviceTensor recent, compressed; // rows [n, D] (invalid while empty)
};

// Appends the segment's inputs x [S, D] to `memory` by the rule above.
void remember(Backend& backend, SegmentMemory& memory, const DeviceTensor& x,
              const Recurrence& shape);

// The rows of `parts` one after another (invalid parts are empty); the last part is valid.
DeviceTensor stackRows(Backend& backend, std::initializer_list<DeviceTensor> parts);

inline int64_t rowsOf(const DeviceTensor& t) {
    return t.valid() ? t.dim(0) : 0;
}
} // namespace headlight::variants
