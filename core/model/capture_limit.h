#pragma once
// A guard against keeping whole attention maps of long texts. Every map a pass captures is
// [H, T, T] per layer, so past a thousand tokens they outgrow everything else the pass holds; the
// long-text paths keep each layer's queries and keys instead and rebuild a map when it is asked
// for (analysis/attention_atlas.h, analysis/streamed_attention.h).
//
// HEADLIGHT_MAP_CAPTURE_TOKENS=N, when set, refuses a pass that would capture probability or score
// maps of more than N tokens. The test suite sets 1024 (tests/CMakeLists.txt), so that no test
// allocates L × H × T × T maps past T = 1,024; unset (the default), the memory budget alone
// decides (model/memory_budget.h).

#include "model/trace.h"

#include <cstdint>
#include <optional>

namespace headlight {

// The limit HEADLIGHT_MAP_CAPTURE_TOKENS sets, or nothing when it is unset. Throws ModelError when
// it is set but is not a positive number of tokens.
std::optional<int64_t> mapCaptureTokenLimit();

// Throws ModelError, with the limit and what to capture instead, when `capture` keeps maps of
// `tokens` tokens past the limit.
void checkMapCaptureLength(int64_t tokens, const CaptureRequest& capture);
} // namespace headlight
