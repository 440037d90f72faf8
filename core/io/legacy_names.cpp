#include "io/legacy_names.h"

#include <array>
#include <utility>

namespace headlight::io {

std::string modernTensorName(const std::string& stored) {
    static const std::array<std::pair<std::string, std::string>, 2> kRenames{
        {{".gamma", ".weight"}, {".beta", ".bias"}}};
    for (const auto& [legacy, modern] : kRenames)
        if (stored.size() > legacy.size() &&
            stored.compare(stored.size() - legacy.size(), legacy.size(), legacy) == 0)
            return stored.substr(0, stored.size() - legacy.size()) + modern;
    return stored;
}
} // namespace headlight::io
