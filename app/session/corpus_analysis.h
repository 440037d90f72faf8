#pragma once
// A corpus of texts through one model and variant, pooled into entropy and adjacent-layer JSD
// violins: what File ▸ Open corpus…, `headlight export --texts` and `headlight figures` share.

#include "analysis/corpus.h"
#include "attention_stats.h"
#include "model_session.h"
#include "variants/variant_spec.h"

#include <QStringList>
#include <atomic>

namespace headlight::app {

struct PooledCorpus {
    analysis::CorpusResult pooled; // per-text errors, cancellation, the pooled values
    CorpusStats stats;             // violins; empty when no text was analysed
    QStringList firstLabels;       // token labels of the first text that tokenized
    std::size_t firstLabelsIndex = 0; // that text's index in the corpus
    int64_t longest = 2;              // the most tokens of a text analysed (at least 2)
};

// Pooled values -> the violins. The entropy axis reaches ln of the longest text's token count: no
// query over T keys is more uncertain than uniform. Empty when no text was analysed.
CorpusStats corpusStats(const analysis::CorpusAccumulator& pooled, int64_t longest,
                        std::size_t failed);

// The non-empty lines of `path`, trimmed; throws std::runtime_error when it cannot be read.
QStringList readCorpus(const QString& path);

// Each text in order (a text the tokenizer or the model refuses is recorded and skipped), with
// `progress` after each and `cancel` checked between texts (analysis::aggregateCorpus). `texts`
// are the corpus's from number `firstIndex` on (one shard of it; corpus_shard.h).
PooledCorpus poolCorpus(const LoadedModel& model, const variants::VariantSpec& variant,
                        const QStringList& texts, const analysis::CorpusProgress& progress,
                        const std::atomic<bool>& cancel, std::size_t firstIndex = 0);
} // namespace headlight::app
