#pragma once
// Which part of a corpus a sharded run reads (`figures --shard i/n`, `features --scan --shard
// i/n`): the texts of shard i, contiguous, the sizes of any two shards differing by at most one.

#include <QString>
#include <cstddef>
#include <utility>

namespace headlight::app {

// Shard `index` (0-based) of `count`.
struct ShardPlace {
    std::size_t index = 0;
    std::size_t count = 1;
};

// "i/n" with 0 ≤ i < n -> the place; throws std::invalid_argument with the reason.
ShardPlace parseShardPlace(const QString& text);
// The corpus texts shard `place` analyses: [first, end) of `total`, contiguous, the sizes of any
// two shards differing by at most one.
std::pair<std::size_t, std::size_t> shardTexts(ShardPlace place, std::size_t total);
} // namespace headlight::app
