#pragma once
// What a caller may do to a forward pass while it runs: follow its progress and stop it. The
// depth loop asks between layers, so a cancelled pass stops after the layer it is in and throws
// PassCancelled; nothing half-computed is returned.

#include <functional>
#include <stdexcept>

namespace headlight {

class PassCancelled : public std::runtime_error {
public:
    PassCancelled()
        : std::runtime_error("cancelled") {}
};

struct PassControl {
    std::function<bool()> cancelled;                   // true: stop before the next layer
    std::function<void(int done, int total)> progress; // after each layer of the stack

    // Reports `done` of `total` layers, then throws PassCancelled when the caller asks to stop.
    void afterLayer(int done, int total) const {
        if (progress) progress(done, total);
        if (cancelled && cancelled()) throw PassCancelled();
    }
};
} // namespace headlight
