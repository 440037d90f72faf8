#include "normalized_text.h"

namespace headlight::tokenize {

NormalizedText::NormalizedText(std::u32string original)
    : chars_(std::move(original)) {
    origin_.reserve(chars_.size());
    for (int i = 0; i < size(); ++i)
        origin_.push_back({i, i + 1});
}

Span NormalizedText::originalSpan(Span range) const {
    // As HF's convert_offsets: an empty range is returned as it is, relative to the piece.
    if (range.begin >= range.end || range.end > size())
        return {originalBegin_ + range.begin, originalBegin_ + range.end};
    return {origin_[range.begin].begin, origin_[range.end - 1].end};
}

void NormalizedText::transform(const std::vector<CharChange>& changes, int initialOffset) {
    std::u32string chars;
    std::vector<Span> origin;
    chars.reserve(changes.size());
    origin.reserve(changes.size());
    int at = initialOffset; // index of the next current character to be replaced
    for (const CharChange& item : changes) {
        // An inserted character shares the alignment of the one before it.
        if (item.change > 0) {
            origin.push_back(at < 1 ? Span{originalBegin_, originalBegin_} : origin_[at - 1]);
        } else {
            origin.push_back(origin_[at]);
            at += 1 - item.change;
        }
        chars.push_back(item.c);
    }
    chars_ = std::move(chars);
    origin_ = std::move(origin);
}

void NormalizedText::expandEach(const std::function<std::u32string(char32_t)>& expansion) {
    std::u32string chars;
    std::vector<Span> origin;
    chars.reserve(chars_.size());
    origin.reserve(chars_.size());
    for (int i = 0; i < size(); ++i) {
        for (char32_t c : expansion(chars_[i])) {
            chars.push_back(c);
            origin.push_back(origin_[i]);
        }
    }
    chars_ = std::move(chars);
    origin_ = std::move(origin);
}

void NormalizedText::prepend(std::u32string_view text) {
    if (chars_.empty()) return;
    chars_.insert(0, text);
    origin_.insert(origin_.begin(), text.size(), origin_.front());
}

void NormalizedText::replace(const std::vector<Span>& matches, std::u32string_view content) {
    std::u32string chars;
    std::vector<Span> origin;
    int copied = 0;
    for (const Span& match : matches) {
        chars.append(chars_, copied, match.begin - copied);
        origin.insert(origin.end(), origin_.begin() + copied, origin_.begin() + match.begin);
        const Span alignment =
            match.end < 1 ? Span{originalBegin_, originalBegin_} : origin_[match.end - 1];
        chars.append(content);
        origin.insert(origin.end(), content.size(), alignment);
        copied = match.end;
    }
    chars.append(chars_, copied);
    origin.insert(origin.end(), origin_.begin() + copied, origin_.end());
    chars_ = std::move(chars);
    origin_ = std::move(origin);
}

NormalizedText NormalizedText::slice(Span range) const {
    NormalizedText piece;
    piece.chars_ = chars_.substr(range.begin, range.end - range.begin);
    piece.origin_.assign(origin_.begin() + range.begin, origin_.begin() + range.end);
    piece.originalBegin_ = range.begin < range.end ? origin_[range.begin].begin : originalBegin_;
    return piece;
}
} // namespace headlight::tokenize
