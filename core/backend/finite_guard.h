#pragma once
// A backend that checks every op's output for NaN and ±Inf and names the first op that made
// one. Why: a non-finite value spreads through every later op of a pass, so the op that shows it
// in a figure or a golden comparison is rarely the one that made it. The guard wraps the real
// backend and downloads each output after the op, so it is for debugging only: it is on in Debug
// builds (NDEBUG undefined) and in any build when HEADLIGHT_FINITE_GUARD=1 is set;
// HEADLIGHT_FINITE_GUARD=0 turns it off in a Debug build too (tests of the ops' own NaN and Inf
// edge cases, which make them on purpose).

#include "backend/backend.h"

#include <memory>
#include <stdexcept>

namespace headlight {

// Thrown by the guard: "non-finite value (nan) at index 12 of [2, 4, 4], first made by
// softmax". The message names the op, the value and where it lies in the op's output.
class NonFiniteValue : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Wraps `inner` in the guard unconditionally.
std::unique_ptr<Backend> makeFiniteGuard(std::unique_ptr<Backend> inner);
// Whether makeCpuBackend and makeVulkanBackend wrap their backend in the guard: as
// HEADLIGHT_FINITE_GUARD says (0 off, anything else on), else in a Debug build only.
bool finiteGuardEnabled();
// `backend` wrapped in the guard when finiteGuardEnabled(), else `backend` itself.
std::unique_ptr<Backend> guardedWhenEnabled(std::unique_ptr<Backend> backend);
} // namespace headlight
