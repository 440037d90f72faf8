#pragma once
// Hugging Face's NormalizedString, in code points: the text as the normalizers have rewritten it,
// with, for every character, the span of the source text it came from. Offsets reported to the
// user are these spans, so each edit below assigns spans exactly as tokenizers' Rust code does.

#include "unicode_normalization.h"

#include <functional>
#include <string>
#include <vector>

namespace headlight::tokenize {

struct Span {
    int begin = 0;
    int end = 0;
    bool operator==(const Span&) const = default;
};

class NormalizedText {
public:
    NormalizedText() = default;
    explicit NormalizedText(std::u32string original); // identity alignment, starting at 0

    const std::u32string& chars() const { return chars_; }
    bool empty() const { return chars_.empty(); }
    int size() const { return static_cast<int>(chars_.size()); }
    // Where this piece starts in the source text (fixed when it was cut out, as HF's
    // offsets_original), used by Metaspace's "first" prepend scheme.
    int originalBegin() const { return originalBegin_; }
    // The source span of normalized characters [range.begin, range.end).
    Span originalSpan(Span range) const;

    // HF's transform(): each output character with its change against the current text, the
    // first `initialOffset` current characters being dropped.
    void transform(const std::vector<CharChange>& changes, int initialOffset);
    // Replaces every character by zero or more characters, each aligned to its source.
    void expandEach(const std::function<std::u32string(char32_t)>& expansion);
    void prepend(std::u32string_view text); // the new characters align to the first one
    // Replaces each span (sorted, disjoint) by `content`, aligned to the span's last character.
    void replace(const std::vector<Span>& matches, std::u32string_view content);
    NormalizedText slice(Span range) const;

private:
    std::u32string chars_;
    std::vector<Span> origin_;
    int originalBegin_ = 0;
};
} // namespace headlight::tokenize
