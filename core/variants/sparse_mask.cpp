#include "variants/sparse_mask.h"

#include "variants/seeded_random.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <vector>

namespace headlight::variants {
namespace {

using Kind = MaskPart::Kind;

MaskPart part(Kind kind) {
    MaskPart p;
    p.kind = kind;
    return p;
}

MaskPart band(int window) {
    MaskPart p = part(Kind::Band);
    p.window = window;
    return p;
}

MaskPart global(const std::vector<int>& tokens) {
    MaskPart p = part(Kind::Global);
    p.tokens = tokens;
    return p;
}

MaskPart block(int size, int window) {
    MaskPart p = part(Kind::Block);
    p.size = size;
    p.window = window;
    return p;
}

std::vector<MaskPart> longformer(const PresetOptions& o) {
    MaskPart local = band(o.window);
    if (o.dilation > 1) local.kind = Kind::Dilated, local.dilation = o.dilation;
    return {local, global(o.global)};
}

std::vector<MaskPart> bigbird(const PresetOptions& o) {
    MaskPart random = part(Kind::RandomBlock);
    random.size = o.block;
    random.count = o.random;
    random.window = 1; // draw outside the sliding block window
    return {block(o.block, 1), random, global(o.global)};
}

std::vector<MaskPart> sparseStrided(const PresetOptions& o) {
    MaskPart strided = part(Kind::Strided);
    strided.stride = o.stride;
    return {band(o.stride - 1), strided};
}

std::vector<MaskPart> sparseFixed(const PresetOptions& o) {
    MaskPart summary = part(Kind::Summary);
    summary.size = o.block;
    summary.count = o.summary;
    return {block(o.block, 0), summary};
}

std::vector<MaskPart> imageLocal(const PresetOptions& o) {
    MaskPart local = part(Kind::Local);
    local.size = o.block;
    local.window = o.memory;
    return {local};
}

std::vector<MaskPart> multiscale(const PresetOptions& o) {
    MaskPart perHead = band(0);
    perHead.windows = o.windows;
    return {perHead};
}

struct Preset {
    const char* name;
    std::vector<MaskPart> (*parts)(const PresetOptions&);
};

const Preset kPresets[] = {
    {"star", [](const PresetOptions&) { return std::vector<MaskPart>{band(1), global({0})}; }},
    {"longformer", longformer},
    {"bigbird", bigbird},
    {"sparse_strided", sparseStrided},
    {"sparse_fixed", sparseFixed},
    {"image_local", imageLocal},
    {"blockwise", [](const PresetOptions& o) { return std::vector<MaskPart>{block(o.block, 0)}; }},
    {"multiscale", multiscale},
};

// Whether the rule of a position-only part allows key j for query i in head h.
bool allows(const MaskPart& p, int64_t i, int64_t j, int h) {
    const int64_t distance = std::llabs(i - j);
    switch (p.kind) {
    case Kind::Band: {
        const int w = p.windows.empty() ? p.window : p.windows[std::size_t(h) % p.windows.size()];
        return distance <= w;
    }
    case Kind::Dilated: return distance <= int64_t(p.window) * p.dilation && distance % p.dilation == 0;
    case Kind::Block: return std::llabs(i / p.size - j / p.size) <= p.window;
    case Kind::Strided: return distance % p.stride == 0;
    case Kind::Summary: return j % p.size >= p.size - p.count;
    case Kind::Local: {
        const int64_t start = (i / p.size) * p.size;
        return j >= start - p.window && j < start + p.size;
    }
    case Kind::Global:
    case Kind::Random:
    case Kind::RandomBlock: return false; // drawn separately
    }
    return false;
}

// Calls allow(i, j) for every (query, key) pair a global part adds: row g and column g.
template <typename Allow> void forGlobal(const MaskPart& p, int64_t tokens, Allow allow) {
    for (int token : p.tokens) {
        const int64_t g = token < 0 ? tokens + token : token;
        if (g < 0 || g >= tokens) continue; // a text shorter than the named position
        for (int64_t t = 0; t < tokens; ++t)
            allow(g, t), allow(t, g);
    }
}

// `count` distinct items of `candidates` by a partial Fisher–Yates shuffle: position c swaps with
// c + below(n − c) (tools/golden/variant_reference.py draws the same).
std::vector<int64_t> drawDistinct(SeededRandom& random, std::vector<int64_t> candidates, int count) {
    const std::size_t taken = std::min(candidates.size(), std::size_t(count));
    for (std::size_t c = 0; c < taken; ++c)
        std::swap(candidates[c], candidates[c + random.below(candidates.size() - c)]);
    candidates.resize(taken);
    return candidates;
}

// Random keys per query, or BigBird's random key blocks per query block, drawn outside
// the block window so that each adds keys the window does not already give (Zaheer et al. 2020).
// Calls allow(i, j) for each pair drawn.
template <typename Allow>
void forRandom(const MaskPart& p, int64_t tokens, uint64_t seed, Allow allow) {
    SeededRandom random(seed);
    if (p.kind == Kind::Random) {
        std::vector<int64_t> all(static_cast<std::size_t>(tokens));
        for (int64_t j = 0; j < tokens; ++j) all[std::size_t(j)] = j;
        for (int64_t i = 0; i < tokens; ++i)
            for (int64_t j : drawDistinct(random, all, p.count))
                allow(i, j);
        return;
    }
    const int64_t blocks = (tokens + p.size - 1) / p.size;
    for (int64_t qb = 0; qb < blocks; ++qb) {
        std::vector<int64_t> outside;
        for (int64_t kb = 0; kb < blocks; ++kb)
            if (std::llabs(kb - qb) > p.window) outside.push_back(kb);
        for (int64_t kb : drawDistinct(random, outside, p.count))
            for (int64_t i = qb * p.size; i < std::min(tokens, (qb + 1) * p.size); ++i)
                for (int64_t j = kb * p.size; j < std::min(tokens, (kb + 1) * p.size); ++j)
                    allow(i, j);
    }
}

bool isDrawn(const MaskPart& p) {
    return p.kind == Kind::Global || p.kind == Kind::Random || p.kind == Kind::RandomBlock;
}

// Calls allow(i, j) for every pair a global or random part adds (the position-only parts are
// evaluated per pair by `allows`).
template <typename Allow> void forDrawn(const SparseMask& mask, int64_t tokens, Allow allow) {
    for (std::size_t index = 0; index < mask.parts.size(); ++index) {
        const MaskPart& p = mask.parts[index];
        if (p.kind == Kind::Global)
            forGlobal(p, tokens, allow);
        else if (isDrawn(p))
            forRandom(p, tokens, streamSeed(mask.seed, uint32_t(1 + index), 0), allow);
    }
}

int patternHeads(const SparseMask& mask, int heads) {
    bool perHead = false;
    for (const MaskPart& p : mask.parts)
        perHead = perHead || p.windows.size() > 1;
    return perHead ? heads : 1;
}
} // namespace

const std::vector<std::string>& presetNames() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> list;
        for (const Preset& p : kPresets) list.push_back(p.name);
        return list;
    }();
    return names;
}

std::vector<MaskPart> presetParts(const std::string& preset, const PresetOptions& options) {
    for (const Preset& p : kPresets)
        if (preset == p.name) return p.parts(options);
    std::string known;
    for (const std::string& name : presetNames()) known += (known.empty() ? "" : ", ") + name;
    throw VariantError("variant spec: unknown mask preset '" + preset + "'; known: " + known);
}

Tensor buildSparseMask(const SparseMask& mask, int64_t tokens, int heads) {
    const int maskHeads = patternHeads(mask, heads);
    Tensor result({maskHeads, tokens, tokens});
    for (int h = 0; h < maskHeads; ++h) {
        float* m = result.values().data() + int64_t(h) * tokens * tokens;
        forDrawn(mask, tokens, [m, tokens](int64_t i, int64_t j) { m[i * tokens + j] = 1.0f; });
        for (const MaskPart& p : mask.parts)
            for (int64_t i = 0; i < tokens && !isDrawn(p); ++i)
                for (int64_t j = 0; j < tokens; ++j)
                    if (allows(p, i, j, h)) m[i * tokens + j] = 1.0f;
    }
    return result;
}

SparsePattern buildSparsePattern(const SparseMask& mask, int64_t tokens, int heads,
                                 const KeepPair& keep) {
    SparsePattern pattern;
    pattern.heads = patternHeads(mask, heads);
    pattern.tokens = tokens;
    pattern.rowStart.push_back(0);
    // The drawn pairs once, as keys per query; the position-only parts row by row.
    std::vector<std::vector<int32_t>> drawn(static_cast<std::size_t>(tokens));
    forDrawn(mask, tokens,
             [&drawn](int64_t i, int64_t j) { drawn[std::size_t(i)].push_back(int32_t(j)); });
    std::vector<uint8_t> row(static_cast<std::size_t>(tokens));
    for (int h = 0; h < pattern.heads; ++h)
        for (int64_t i = 0; i < tokens; ++i) {
            std::fill(row.begin(), row.end(), uint8_t(0));
            for (const int32_t j : drawn[std::size_t(i)])
                row[std::size_t(j)] = 1;
            for (const MaskPart& p : mask.parts)
                for (int64_t j = 0; j < tokens && !isDrawn(p); ++j)
                    if (allows(p, i, j, h)) row[std::size_t(j)] = 1;
            for (int64_t j = 0; j < tokens; ++j)
                if (row[std::size_t(j)] && keep(i, j)) pattern.keys.push_back(int32_t(j));
            if (pattern.keys.size() > std::size_t(std::numeric_limits<int32_t>::max()))
                throw VariantError(
                    "the sparse pattern has more than 2^31 entries: shorten the text");
            pattern.rowStart.push_back(int32_t(pattern.keys.size()));
        }
    return pattern;
}
} // namespace headlight::variants
