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
};

// The non-empty lines of `path`, trimmed; throws std::runtime_error when it cannot be read.
QStringList readCorpus(const QString& path);

// Each text in order (a text the tokenizer or the model refuses is recorded and skipped), with
// `progress` after each and `cancel` checked between texts (analysis::aggregateCorpus). The
// entropy axis reaches ln of the longest text's token count: no query over T keys is more
// uncertain than uniform.
PooledCorpus poolCorpus(const LoadedModel& model, const variants::VariantSpec& variant,
                        const QStringList& texts, const analysis::CorpusProgress& progress,
                        const std::atomic<bool>& cancel);
} // namespace headlight::app
