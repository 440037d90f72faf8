#include "io/tensor_file.h"

namespace headlight::io {

std::string quotedName(std::string_view name) {
    constexpr std::size_t kShown = 200;
    if (name.size() <= kShown) return "'" + std::string(name) + "'";
    std::size_t cut = kShown;
    while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80)
        --cut;
    return "'" + std::string(name.substr(0, cut)) + "…'";
}
} // namespace headlight::io
