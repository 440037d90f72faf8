#include "circuit_cache.h"

#include "model/pass_control.h"

#include <stdexcept>

namespace headlight::app {

std::shared_ptr<const analysis::CircuitScores>
CircuitCache::scores(const QString& folder, QString* why,
                     const std::function<void(int, int)>& afterPair) {
    const std::lock_guard lock(mutex_);
    if (!tried_) {
        try {
            scores_ = std::make_shared<const analysis::CircuitScores>(
                analysis::scoreCircuits(folder.toStdString(), afterPair));
        } catch (const PassCancelled&) {
            throw; // not tried: the next pass that asks computes them
        } catch (const std::exception& error) {
            refusal_ = QString::fromUtf8(error.what()).section('\n', 0, 0);
        }
        tried_ = true;
    }
    if (why) *why = refusal_;
    return scores_;
}

std::shared_ptr<const analysis::CircuitScores> CircuitCache::computed() const {
    const std::lock_guard lock(mutex_);
    return scores_;
}
} // namespace headlight::app
