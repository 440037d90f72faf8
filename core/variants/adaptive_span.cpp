#include "variants/adaptive_span.h"

#include <algorithm>
#include <cstdlib>

namespace headlight::variants {

float spanRamp(float distance, float span, float ramp) { return std::clamp((ramp + span - distance) / ramp, 0.0f, 1.0f); }

Tensor spanMask(const AdaptiveSpan& span, int heads, int64_t tokens) {
    Tensor mask({heads, tokens, tokens});
    float* m = mask.values().data();
    for (int h = 0; h < heads; ++h) {
        const float z = span.spans[std::size_t(h) % span.spans.size()];
        for (int64_t i = 0; i < tokens; ++i)
            for (int64_t j = 0; j < tokens; ++j) *m++ = spanRamp(float(std::llabs(i - j)), z, span.ramp);
    }
    return mask;
}
} // namespace headlight::variants
