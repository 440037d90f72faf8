#pragma once
// Unicode normalization that also reports how each output character relates to the input, as the
// unicode-normalization-alignments crate behind Hugging Face's NFC/NFD/NFKC/NFKD normalizers does:
// every output character carries a `change` (0: replaces one input character, +1: inserted after
// the previous one, -n: replaces one and swallows n more). NormalizedText::transform consumes it.

#include <optional>
#include <string>
#include <vector>

namespace headlight::tokenize {

struct CharChange {
    char32_t c;
    int change;
};

enum class NormalForm { NFC, NFD, NFKC, NFKD };

// nullopt when `text` is already in that form, so alignments stay as they are.
std::optional<std::vector<CharChange>> normalizeWithChanges(const std::u32string& text,
                                                            NormalForm form);
} // namespace headlight::tokenize
