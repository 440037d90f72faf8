#include "bpe_model.h"

#include "tokenizer.h"
#include "unicode_text.h"

#include <cstdio>
#include <queue>

namespace headlight::tokenize {
namespace {

std::size_t pairHash(int left, int right) {
    return mixBits((static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
                   static_cast<uint32_t>(right));
}

std::string byteToken(unsigned char byte) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", byte);
    return name;
}

// A merge waiting in the queue; the lowest rank comes out first, then the leftmost.
struct Candidate {
    int pos;
    int rank;
    int newId;
    bool operator>(const Candidate& other) const {
        return rank != other.rank ? rank > other.rank : pos > other.pos;
    }
};
} // namespace

BpeModel::BpeModel(Vocab vocab, const MergeList& merges, BpeOptions options,
                   const std::string& mergeSource)
    : vocab_(std::move(vocab))
    , options_(std::move(options)) {
    merges_.reserve(merges.size());
    mergeIndex_.reserve(merges.size(), [this](int rank) {
        return pairHash(merges_[rank].left, merges_[rank].right);
    });
    std::string merged; // reused: no allocation per merge
    for (size_t rank = 0; rank < merges.size(); ++rank)
        addMerge(merges[rank].first, merges[rank].second, merged, static_cast<int>(rank),
                 mergeSource);
}

void BpeModel::addMerge(std::string_view left, std::string_view right, std::string& merged,
                        int rank, const std::string& mergeSource) {
    const auto fail = [&](const std::string& problem) {
        throw TokenizerError(mergeSource + ": merge " + std::to_string(rank + 1) + " ('" +
                             std::string(left) + " " + std::string(right) + "') " + problem);
    };
    const std::string& prefix = options_.continuingSubwordPrefix;
    if (right.substr(0, prefix.size()) != prefix)
        fail("does not start its second token with '" + prefix + "'");
    merged.assign(left).append(right.substr(prefix.size()));
    int ids[3];
    const std::string_view parts[3] = {left, right, merged};
    for (int i = 0; i < 3; ++i) {
        const auto id = vocab_.idOf(parts[i]);
        if (!id) fail("uses '" + std::string(parts[i]) + "', which is not in the vocabulary");
        ids[i] = *id;
    }
    merges_.push_back({ids[0], ids[1], ids[2]});
    mergeIndex_.assign(
        pairHash(ids[0], ids[1]), rank,
        [&](int other) { return merges_[other].left == ids[0] && merges_[other].right == ids[1]; },
        [this](int other) { return pairHash(merges_[other].left, merges_[other].right); });
}

std::vector<PieceToken> BpeModel::tokenize(std::u32string_view word) const {
    if (options_.ignoreMerges) {
        std::string whole = encodeUtf8(word);
        if (const auto id = vocab_.idOf(whole))
            return {{*id, std::move(whole), {0, static_cast<int>(word.size())}}};
    }
    std::vector<Symbol> symbols = initialSymbols(word);
    mergeAll(symbols);
    std::vector<PieceToken> tokens;
    for (const Symbol& symbol : symbols)
        if (!symbol.removed) tokens.push_back({symbol.id, vocab_.tokenOf(symbol.id), symbol.span});
    return tokens;
}

std::vector<BpeModel::Symbol> BpeModel::initialSymbols(std::u32string_view word) const {
    std::vector<Symbol> symbols;
    std::optional<Symbol> pendingUnk;
    const int last = static_cast<int>(word.size()) - 1;
    for (int i = 0; i <= last; ++i) {
        std::string piece = encodeUtf8(word.substr(i, 1));
        if (i > 0) piece.insert(0, options_.continuingSubwordPrefix);
        if (i == last) piece += options_.endOfWordSuffix;
        addCharacter(symbols, pendingUnk, std::move(piece), i);
    }
    if (pendingUnk) symbols.push_back(*pendingUnk);
    for (size_t i = 0; i < symbols.size(); ++i) {
        symbols[i].prev = static_cast<int>(i) - 1;
        symbols[i].next = i + 1 < symbols.size() ? static_cast<int>(i) + 1 : -1;
    }
    return symbols;
}

// One character of the word: its token, else its bytes, else [UNK] (held back so that
// consecutive unknowns can be fused; HF emits byte tokens without flushing it, and so do we).
void BpeModel::addCharacter(std::vector<Symbol>& symbols, std::optional<Symbol>& pendingUnk,
                            std::string piece, int index) const {
    const Span span{index, index + 1};
    if (const auto id = vocab_.idOf(piece)) {
        if (pendingUnk) symbols.push_back(*pendingUnk);
        pendingUnk.reset();
        symbols.push_back({*id, span, 0, 0});
        return;
    }
    if (options_.byteFallback) {
        std::vector<Symbol> bytes;
        for (char byte : piece)
            if (const auto id = vocab_.idOf(byteToken(static_cast<unsigned char>(byte))))
                bytes.push_back({*id, span, 0, 0});
        if (bytes.size() == piece.size()) {
            symbols.insert(symbols.end(), bytes.begin(), bytes.end());
            return;
        }
    }
    if (!options_.unkToken) return;
    if (pendingUnk && options_.fuseUnk) {
        pendingUnk->span.end = span.end;
        return;
    }
    if (pendingUnk) symbols.push_back(*pendingUnk);
    pendingUnk = Symbol{unkId(), span, 0, 0};
}

// HF's Word::merge_all: a priority queue of candidate merges; entries made stale by an earlier
// merge are recognised and skipped when they come out.
void BpeModel::mergeAll(std::vector<Symbol>& symbols) const {
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
    const auto offer = [&](int pos) {
        const int next = symbols[pos].next;
        if (next < 0) return;
        if (const int rank = findMerge(symbols[pos].id, symbols[next].id); rank >= 0)
            queue.push({pos, rank, merges_[rank].newId});
    };
    for (size_t i = 0; i + 1 < symbols.size(); ++i)
        offer(static_cast<int>(i));
    while (!queue.empty()) {
        const Candidate top = queue.top();
        queue.pop();
        Symbol& current = symbols[top.pos];
        if (current.removed || current.next < 0) continue;
        Symbol& right = symbols[current.next];
        const int rank = findMerge(current.id, right.id);
        if (rank < 0 || merges_[rank].newId != top.newId) continue;
        current.id = top.newId;
        current.span.end = right.span.end;
        current.next = right.next;
        right.removed = true;
        if (current.next >= 0) symbols[current.next].prev = top.pos;
        if (current.prev >= 0) offer(current.prev);
        offer(top.pos);
    }
}

int BpeModel::findMerge(int left, int right) const {
    return mergeIndex_.find(pairHash(left, right), [&](int rank) {
        return merges_[rank].left == left && merges_[rank].right == right;
    });
}

int BpeModel::unkId() const {
    const auto id = vocab_.idOf(*options_.unkToken);
    if (!id)
        throw TokenizerError("the BPE unknown token '" + *options_.unkToken +
                             "' is not in the vocabulary");
    return *id;
}
} // namespace headlight::tokenize
