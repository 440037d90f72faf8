#include "model.h"

#include <algorithm>
#include <functional>

namespace headlight::tokenize {
namespace {

std::size_t hashOfToken(std::string_view token) {
    return std::hash<std::string_view>{}(token);
}

std::size_t hashOfIdValue(int id) {
    return mixBits(static_cast<uint32_t>(id));
}
} // namespace

void Vocab::reserve(std::size_t tokens, std::size_t textBytes) {
    text_.reserve(textBytes);
    entries_.reserve(tokens);
    byToken_.reserve(tokens, [this](int entry) { return hashOfEntry(entry); });
    byId_.reserve(tokens, [this](int entry) { return hashOfId(entry); });
}

void Vocab::add(std::string_view token, int id) {
    const std::size_t hash = hashOfToken(token);
    const auto sameToken = [&](int entry) { return textOf(entry) == token; };
    int entry = byToken_.find(hash, sameToken);
    if (entry >= 0) {
        // A token listed twice keeps only its last id; the earlier id then names nothing.
        entries_[entry].id = id;
    } else {
        entry = static_cast<int>(entries_.size());
        entries_.push_back(
            {static_cast<uint32_t>(text_.size()), static_cast<uint32_t>(token.size()), id});
        text_.append(token);
        byToken_.assign(hash, entry, sameToken, [this](int e) { return hashOfEntry(e); });
    }
    longest_ = std::max(longest_, token.size());
    byId_.assign(
        hashOfIdValue(id), entry, [&](int e) { return entries_[e].id == id; },
        [this](int e) { return hashOfId(e); });
}

std::optional<int> Vocab::idOf(std::string_view token) const {
    const int entry = byToken_.find(hashOfToken(token), [&](int e) { return textOf(e) == token; });
    if (entry < 0) return std::nullopt;
    return entries_[entry].id;
}

std::string Vocab::tokenOf(int id) const {
    const int entry = byId_.find(hashOfIdValue(id), [&](int e) { return entries_[e].id == id; });
    return entry < 0 ? std::string() : std::string(textOf(entry));
}

std::string_view Vocab::textOf(int entry) const {
    const Entry& e = entries_[entry];
    return std::string_view(text_).substr(e.offset, e.length);
}

std::size_t Vocab::hashOfEntry(int entry) const {
    return hashOfToken(textOf(entry));
}

std::size_t Vocab::hashOfId(int entry) const {
    return hashOfIdValue(entries_[entry].id);
}
} // namespace headlight::tokenize
