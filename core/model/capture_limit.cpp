#include "model/capture_limit.h"

#include "model/transformer.h"

#include <cstdlib>
#include <string>

namespace headlight {

std::optional<int64_t> mapCaptureTokenLimit() {
    const char* text = std::getenv("HEADLIGHT_MAP_CAPTURE_TOKENS");
    if (!text || !*text) return std::nullopt;
    char* end = nullptr;
    const long long limit = std::strtoll(text, &end, 10);
    if (*end != '\0' || limit <= 0)
        throw ModelError(std::string("HEADLIGHT_MAP_CAPTURE_TOKENS is '") + text +
                         "', not a positive number of tokens");
    return int64_t(limit);
}

void checkMapCaptureLength(int64_t tokens, const CaptureRequest& capture) {
    if (!capture.probabilities && !capture.scores) return;
    const std::optional<int64_t> limit = mapCaptureTokenLimit();
    if (!limit || tokens <= *limit) return;
    throw ModelError("capturing attention maps of " + std::to_string(tokens) +
                     " tokens is over HEADLIGHT_MAP_CAPTURE_TOKENS = " + std::to_string(*limit) +
                     ": capture queries and keys and rebuild the maps on demand");
}
} // namespace headlight
