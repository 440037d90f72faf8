#include "model.h"

#include <algorithm>

namespace headlight::tokenize {

void Vocab::add(std::string token, int id) {
    // A token listed twice keeps only its last id; the earlier id then names nothing.
    if (const auto previous = ids_.find(token); previous != ids_.end())
        tokens_.erase(previous->second);
    tokens_[id] = token;
    longest_ = std::max(longest_, token.size());
    ids_[std::move(token)] = id;
}

std::optional<int> Vocab::idOf(const std::string& token) const {
    const auto found = ids_.find(token);
    if (found == ids_.end()) return std::nullopt;
    return found->second;
}

std::string Vocab::tokenOf(int id) const {
    const auto found = tokens_.find(id);
    return found == tokens_.end() ? std::string() : found->second;
}
} // namespace headlight::tokenize
