#pragma once
// One shard of a corpus run (`headlight figures ... --shard i/n`) as a file, and the merge of all
// n shards (`headlight merge`) into what one run over the whole corpus pools. docs/scale.md
// describes the file: a safetensors file whose tensors are each model's kept values with their
// sampling keys and corpus positions, and each head's count of values seen (exact partial sums),
// and whose metadata key "headlight.corpus_shard" holds a JSON header: the settings every shard
// must share (figure set, corpus hash, shard count, backend, sample cap and seed), the shard's
// index, each model's name, file hashes, failed texts and first token labels, and where it was
// made (Headlight version, revision, command line). Shards merge exactly because the sample is a
// bottom-k sample keyed by corpus position (core/analysis/corpus.h).

#include "corpus_analysis.h"
#include "shard_place.h"

#include <QJsonObject>
#include <QString>
#include <stdexcept>
#include <vector>

namespace headlight::app {

struct ShardModel {
    QString name;
    QJsonObject files; // file name → SHA-256, every file of the model that was read
    PooledCorpus corpus;
};

struct CorpusShard {
    ShardPlace place;
    QJsonObject settings; // what every shard of one run shares (figure set, corpus, backend, …)
    QJsonObject made;     // version, revision, command: where this shard came from
    std::vector<ShardModel> models;
};

class CorpusShardError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Writes atomically (a temporary file renamed over `path`). Throws CorpusShardError.
void writeCorpusShard(const QString& path, const CorpusShard& shard);
// Throws CorpusShardError (one line, naming the file) for a file that is not a whole shard.
CorpusShard readCorpusShard(const QString& path);
// Shards read from `paths` (same order) -> one shard holding all n, place 0/1. Throws
// CorpusShardError naming the files when settings or models differ, or an index is missing or
// given twice. The result does not depend on the order of the shards.
CorpusShard mergeCorpusShards(const std::vector<CorpusShard>& shards, const QStringList& paths);
} // namespace headlight::app
