#pragma once
// A loaded model's circuit scores (analysis/circuit_scores.h: copying and Q/K/V composition),
// read from its weights the first time a pass asks for them and kept with the model: they depend
// on the weights alone, not on the text or the variant, and cost L²·D³ multiply-adds. Any thread
// may ask; the first computes while the others wait.

#include "analysis/circuit_scores.h"

#include <QString>
#include <memory>
#include <mutex>

namespace headlight::app {

class CircuitCache {
public:
    // The scores of the checkpoint in `folder`, computed on the first call; null when the
    // weights have none (`why` then says why in one line). What `afterPair` throws (a cancelled
    // pass) leaves the cache as it was and reaches the caller.
    std::shared_ptr<const analysis::CircuitScores>
    scores(const QString& folder, QString* why,
           const std::function<void(int done, int total)>& afterPair = {});
    // What an earlier call computed, without computing; null before one.
    std::shared_ptr<const analysis::CircuitScores> computed() const;

private:
    mutable std::mutex mutex_;
    bool tried_ = false;
    std::shared_ptr<const analysis::CircuitScores> scores_;
    QString refusal_;
};
} // namespace headlight::app
