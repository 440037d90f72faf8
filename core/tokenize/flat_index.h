#pragma once
// An open-addressing hash table of int indices into an array the caller owns (vocabulary entries,
// merges), probed linearly. Why not std::unordered_map: the Hub's tokenizers have 128k-262k tokens
// and 280k-515k merges, and a node per entry made loading them slower than Hugging Face's Rust
// library and twice as large; here each entry costs 11 to 21 bytes of slots. Each slot keeps the
// upper half of its key's hash, so probing past other keys rarely reads the caller's array.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace headlight::tokenize {

class FlatIndex {
public:
    // Room for `count` indices without rehashing (at most 3/4 of the slots used).
    template <class HashOf> void reserve(std::size_t count, const HashOf& hashOf) {
        std::size_t wanted = 16;
        while (wanted * 3 < count * 4 + 4)
            wanted *= 2;
        if (wanted > slots_.size()) rehash(wanted, hashOf);
    }

    // The index stored under `hash` for which `matches(index)` holds, or -1.
    template <class Matches> int find(std::size_t hash, const Matches& matches) const {
        if (slots_.empty()) return -1;
        return slots_[slotOf(hash, matches)].index;
    }

    // Stores `index` in place of the one `matches` recognises, or in a new slot. Returns the index
    // it replaced, or -1.
    template <class Matches, class HashOf>
    int assign(std::size_t hash, int index, const Matches& matches, const HashOf& hashOf) {
        reserve(count_ + 1, hashOf);
        Slot& slot = slots_[slotOf(hash, matches)];
        const int previous = slot.index;
        if (previous < 0) ++count_;
        slot = {static_cast<int32_t>(index), tagOf(hash)};
        return previous;
    }

private:
    struct Slot {
        int32_t index = -1;
        uint32_t tag = 0;
    };

    static uint32_t tagOf(std::size_t hash) { return static_cast<uint32_t>(hash >> 32); }

    template <class Matches> std::size_t slotOf(std::size_t hash, const Matches& matches) const {
        const std::size_t mask = slots_.size() - 1;
        const uint32_t tag = tagOf(hash);
        std::size_t slot = hash & mask;
        while (slots_[slot].index >= 0 &&
               (slots_[slot].tag != tag || !matches(slots_[slot].index)))
            slot = (slot + 1) & mask;
        return slot;
    }

    template <class HashOf> void rehash(std::size_t size, const HashOf& hashOf) {
        std::vector<Slot> old(size);
        old.swap(slots_);
        for (const Slot& moved : old)
            if (moved.index >= 0)
                slots_[slotOf(hashOf(moved.index), [](int) { return false; })] = moved;
    }

    std::vector<Slot> slots_;
    std::size_t count_ = 0;
};

// Spreads the bits of an integer key over the whole word (SplitMix64's finaliser), so that the
// low bits a power-of-two table uses depend on all of them.
inline std::size_t mixBits(uint64_t key) {
    key ^= key >> 30;
    key *= 0xbf58476d1ce4e5b9ULL;
    key ^= key >> 27;
    key *= 0x94d049bb133111ebULL;
    return static_cast<std::size_t>(key ^ (key >> 31));
}
} // namespace headlight::tokenize
